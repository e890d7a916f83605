import type { Knex } from 'knex';
import { types as pgTypes } from 'pg';

/** PostgreSQL's type id of `timestamp with time zone`: every time column of the content tables. */
const TIMESTAMPTZ_OID = 1184;

const defaultTimestamptz = pgTypes.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => unknown;

/**
 * A timestamptz as the ISO text a content item shows (`2026-01-01T00:00:07.123Z`, cut to the millisecond as pg's own
 * Date parser cuts it), straight from PostgreSQL's text when the session answers in UTC with the ISO DateStyle
 * (`2026-01-01 00:00:07.123456+00`); anything else (another time zone or DateStyle, BC, five-digit years, infinity) is
 * parsed as pg parses it by default, and the view turns that into text as it always did.
 */
export function isoTimestampFromPg(text: string): unknown {
  const end = text.length - 3;
  if (
    end >= 19 &&
    text.charCodeAt(4) === 45 /* - */ &&
    text.charCodeAt(10) === 32 /* space */ &&
    text.charCodeAt(end) === 43 /* + */ &&
    text.charCodeAt(end + 1) === 48 /* 0 */ &&
    text.charCodeAt(end + 2) === 48 /* 0 */ &&
    (end === 19 || text.charCodeAt(19) === 46) /* . */
  ) {
    const millis = end === 19 ? '000' : `${text.slice(20, end)}00`.slice(0, 3);
    return `${text.slice(0, 10)}T${text.slice(11, 19)}.${millis}Z`;
  }
  return defaultTimestamptz(text);
}

/** pg's type parsers with timestamptz read as ISO text (the listing shows times only as text, never as Dates). */
const LISTING_TYPES = {
  getTypeParser(oid: number, format?: string): unknown {
    if (oid === TIMESTAMPTZ_OID && format !== 'binary') return isoTimestampFromPg;
    return pgTypes.getTypeParser(oid, (format ?? 'text') as 'text');
  },
};

/**
 * Rows of a content table read for the library: each row an array in the order of `columns` (no per-row object from
 * pg, the view builds the only one), timestamps as ISO text (see isoTimestampFromPg).
 */
export interface ContentRowSet {
  columns: string[];
  rows: unknown[][];
  /** Timestamps come as ISO text already (see isoTimestampFromPg), unless their text needed pg's own parser. */
  isoTimestamps: true;
}

/** Runs a content table's query (through the same knex runner, pool and guards as any other) as a ContentRowSet. */
export async function readContentRows(knex: Knex, query: Knex.QueryBuilder): Promise<ContentRowSet> {
  const { sql, bindings } = query.toSQL();
  const result = (await knex.raw(sql, bindings).options({ rowMode: 'array', types: LISTING_TYPES })) as { fields: Array<{ name: string }>; rows: unknown[][] };
  return { columns: result.fields.map((field) => field.name), rows: result.rows, isoTimestamps: true };
}
