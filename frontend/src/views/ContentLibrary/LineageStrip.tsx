import { useEffect, useState, type ReactElement } from 'react';
import { chainOrder, fetchLineage, LINEAGE_KIND_LABEL, type Lineage, type LineageNode } from '../../api/lineage';

function dateText(iso: string | null): string {
  return iso ? new Date(iso).toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' }) : '';
}

/**
 * The item's version chain in its dialog: the render it started from, each step made from it, and what was made
 * from this item; each step opens that item; admins also get the run that made it in the Temporal UI.
 */
export function LineageStrip({ itemId, onOpen }: { itemId: string; onOpen?: (node: LineageNode) => void }): ReactElement | null {
  // each answer is kept with the item it is for: when the dialog moves to another item, the previous item's chain is
  // never shown under the new item's title, not even for the one render before the new read starts
  const [answer, setAnswer] = useState<{ itemId: string; lineage: Lineage | null; failed: boolean } | null>(null);

  useEffect(() => {
    const abort = new AbortController();
    fetchLineage(itemId, abort.signal).then(
      (lineage) => setAnswer({ itemId, lineage, failed: false }),
      () => {
        if (!abort.signal.aborted) setAnswer({ itemId, lineage: null, failed: true });
      },
    );
    return () => abort.abort();
  }, [itemId]);

  const current = answer?.itemId === itemId ? answer : null;
  if (current?.failed) return <p className="muted lineage-note">Could not load the version history.</p>;
  const lineage = current?.lineage;
  // nothing while it loads: a line that then vanished (most items have no chain) moved the buttons below it
  if (!lineage) return null;
  if (lineage.ancestors.length === 0 && lineage.descendants.length === 0) return null;
  const chain = chainOrder(lineage);
  return (
    <nav className="lineage-strip" aria-label="Version history">
      <ol>
        {chain.map((node) => {
          const label = `${LINEAGE_KIND_LABEL[node.kind]}${node.exists ? '' : ' (deleted)'}`;
          const body = (
            <>
              {node.thumbnail_url ? <img src={node.thumbnail_url} alt="" loading="lazy" /> : <span className="lineage-thumb-empty" aria-hidden="true" />}
              <span className="lineage-kind">{label}</span>
              <span className="lineage-date">{node.exists ? dateText(node.created_at) : 'deleted'}</span>
            </>
          );
          return (
            <li key={`${node.kind}:${node.id}`} className={node.current ? 'lineage-current' : node.exists ? undefined : 'lineage-deleted'}>
              {/* a draft image lives in Enhance Renders, not in the library: shown, not opened */}
              {node.current || !node.exists || !onOpen || node.kind === 'draft_image' ? (
                <div className="lineage-step" aria-current={node.current ? 'true' : undefined} title={node.name ?? undefined}>
                  {body}
                </div>
              ) : (
                <button type="button" className="lineage-step" onClick={() => onOpen(node)} title={`Open ${node.name ?? label}`}>
                  {body}
                </button>
              )}
              {node.temporal_url && (
                <a className="lineage-run" href={node.temporal_url} target="_blank" rel="noreferrer">
                  Run in Temporal UI
                </a>
              )}
            </li>
          );
        })}
      </ol>
    </nav>
  );
}
