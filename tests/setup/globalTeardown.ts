import fs from 'node:fs';
import type { TestServices } from './globalSetup';

export default async function globalTeardown(): Promise<void> {
  const handles = (globalThis as { __testServices?: TestServices }).__testServices;
  if (!handles) return;
  if (handles.stopChromium) await handles.stopChromium();
  await handles.stopTemporal();
  const { Client } = await import('pg');
  const admin = new Client({ connectionString: handles.adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists "${handles.templateDatabase}" with (force)`);
  if (!process.env.KEEP_TEST_DB) await admin.query(`drop database if exists "${handles.database}" with (force)`);
  await admin.end();
  if (process.env.STORAGE_DIR) fs.rmSync(process.env.STORAGE_DIR, { recursive: true, force: true });
  if (handles.stopS3) await handles.stopS3();
  if (handles.s3Dir) fs.rmSync(handles.s3Dir, { recursive: true, force: true });
  if (handles.stopPostgres) await handles.stopPostgres();
  if (handles.postgresDir) fs.rmSync(handles.postgresDir, { recursive: true, force: true });
}
