import { useCallback, useEffect, useState, type ReactElement } from 'react';
import { fetchEnhanceAccess } from '../../api/enhanceSet';
import { hrefWithParams } from '../../atoms/viewUrl';
import { AccessGate } from './AccessGate';
import { accessFlag, introSeenFlag, shouldShowIntro } from './draftState';
import { DraftProjectsList } from './DraftProjectsList';
import { DraftWorkspaceView } from './DraftWorkspaceView';
import { IntroTour } from './IntroTour';
import './enhance.css';

function draftFromAddress(): string | null {
  const id = new URLSearchParams(window.location.search).get('draft');
  return id && /^[0-9a-f-]{36}$/i.test(id) ? id : null;
}

/** The open draft, kept in `?draft=` so reload and Back work; opening one adds a history entry. */
function useOpenDraft(): [string | null, (id: string | null) => void] {
  const [draftId, setDraftId] = useState<string | null>(draftFromAddress);
  useEffect(() => {
    const onPopState = () => setDraftId(draftFromAddress());
    window.addEventListener('popstate', onPopState);
    return () => window.removeEventListener('popstate', onPopState);
  }, []);
  const open = useCallback((id: string | null) => {
    setDraftId(id);
    window.history.pushState(null, '', hrefWithParams(window.location.href, { draft: id }));
  }, []);
  return [draftId, open];
}

/**
 * Enhance Renders (Beta): locked until the access code is accepted (the server checks it and remembers it for
 * the account; the browser keeps the unlock in localStorage), then the Draft Projects list or an open draft.
 */
export function EnhanceRendersView(): ReactElement {
  const [unlocked, setUnlocked] = useState(() => accessFlag.read(window.localStorage));
  // false when the server has no access code configured: the gate says so instead of taking guesses
  const [configured, setConfigured] = useState(true);
  const [draftId, openDraft] = useOpenDraft();
  const [intro, setIntro] = useState(false);
  const [creating, setCreating] = useState(false);

  useEffect(() => {
    if (unlocked) setIntro(shouldShowIntro(window.localStorage, window.location.search));
  }, [unlocked]);

  const lock = useCallback(() => {
    accessFlag.write(window.localStorage, false);
    setUnlocked(false);
  }, []);

  // the server remembers the unlock per account: follow it (another account on this browser, or a new browser)
  useEffect(() => {
    let current = true;
    fetchEnhanceAccess().then(
      (access) => {
        if (!current) return;
        accessFlag.write(window.localStorage, access.unlocked);
        setUnlocked(access.unlocked);
        setConfigured(access.configured);
      },
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, []);

  function closeIntro(): void {
    introSeenFlag.write(window.localStorage, true);
    setIntro(false);
    if (new URLSearchParams(window.location.search).get('intro') === '1') {
      window.history.replaceState(null, '', hrefWithParams(window.location.href, { intro: null }));
    }
  }

  if (!unlocked) {
    return (
      <AccessGate
        configured={configured}
        onUnlocked={() => {
          accessFlag.write(window.localStorage, true);
          setUnlocked(true);
        }}
      />
    );
  }

  return (
    <>
      {draftId ? (
        <DraftWorkspaceView key={draftId} draftId={draftId} onBack={() => openDraft(null)} onLocked={lock} />
      ) : (
        <DraftProjectsList onOpen={openDraft} onLocked={lock} creating={creating} onCreatingChange={setCreating} />
      )}
      {intro && (
        <IntroTour
          onClose={closeIntro}
          onCreateDraft={() => {
            closeIntro();
            if (draftId) openDraft(null);
            setCreating(true);
          }}
        />
      )}
    </>
  );
}
