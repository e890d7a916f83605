import { useAtom } from 'jotai';
import { useRef, type KeyboardEvent, type ReactElement } from 'react';
import { accountTabAtom } from '../../atoms/view';
import { ACCOUNT_TABS, type AccountTab } from '../../atoms/viewUrl';
import { BillingTab } from './BillingTab';
import { ProfileTab } from './ProfileTab';
import { SecurityTab } from './SecurityTab';
import { SettingsTab } from './SettingsTab';

const TAB_LABEL: Record<AccountTab, string> = { profile: 'Profile', billing: 'Billing', security: 'Security', settings: 'Settings' };

export function AccountView(): ReactElement {
  const [tab, setTab] = useAtom(accountTabAtom);
  const tabRefs = useRef<Partial<Record<AccountTab, HTMLButtonElement | null>>>({});

  function onTabKeyDown(event: KeyboardEvent<HTMLButtonElement>) {
    const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
    if (step === 0) return;
    const index = ACCOUNT_TABS.indexOf(tab);
    const next = ACCOUNT_TABS[(index + step + ACCOUNT_TABS.length) % ACCOUNT_TABS.length] ?? tab;
    setTab(next);
    tabRefs.current[next]?.focus();
  }

  return (
    <section className="view" aria-labelledby="account-title">
      <header className="view-header">
        <h1 id="account-title">Account Settings</h1>
      </header>
      <div className="tabs" role="tablist" aria-label="Account sections">
        {ACCOUNT_TABS.map((t) => (
          <button
            key={t}
            ref={(el) => {
              tabRefs.current[t] = el;
            }}
            type="button"
            role="tab"
            id={`account-tab-${t}`}
            aria-selected={tab === t}
            aria-controls={`account-panel-${t}`}
            tabIndex={tab === t ? 0 : -1}
            className="tab"
            onClick={() => setTab(t)}
            onKeyDown={onTabKeyDown}
          >
            {TAB_LABEL[t]}
          </button>
        ))}
      </div>
      <div className="tab-panel" role="tabpanel" id={`account-panel-${tab}`} aria-labelledby={`account-tab-${tab}`}>
        {tab === 'profile' && <ProfileTab />}
        {tab === 'billing' && <BillingTab />}
        {tab === 'security' && <SecurityTab />}
        {tab === 'settings' && <SettingsTab />}
      </div>
    </section>
  );
}
