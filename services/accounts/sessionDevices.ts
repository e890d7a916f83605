/** The device a session was opened from, as the Security panel names it: browser and system read by bowser. */
import Bowser from 'bowser';

export function describeDevice(userAgent: string | null): string {
  if (!userAgent) return 'Unknown device';
  const parsed = Bowser.parse(userAgent);
  const browser = [parsed.browser.name, parsed.browser.version?.split('.')[0]].filter(Boolean).join(' ');
  const os = [parsed.os.name, parsed.os.versionName ?? parsed.os.version].filter(Boolean).join(' ');
  const label = [browser, os].filter(Boolean).join(' on ');
  return label || 'Unknown device';
}
