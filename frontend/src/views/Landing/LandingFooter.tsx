import type { ReactElement } from 'react';

/** Where Render Studio posts (001 section 1: a footer with social links). */
export const SOCIAL_LINKS: { name: string; href: string }[] = [
  { name: 'Instagram', href: 'https://www.instagram.com/renderstudio' },
  { name: 'LinkedIn', href: 'https://www.linkedin.com/company/renderstudio' },
  { name: 'YouTube', href: 'https://www.youtube.com/@renderstudio' },
  { name: 'TikTok', href: 'https://www.tiktok.com/@renderstudio' },
  { name: 'Facebook', href: 'https://www.facebook.com/renderstudio' },
];

export function LandingFooter(): ReactElement {
  return (
    <footer className="landing-footer">
      <div className="landing-footer-brand">
        <span>© {new Date().getFullYear()} Render Studio</span>
        <span>Prices in New Zealand dollars.</span>
      </div>
      <nav className="landing-social" aria-label="Render Studio on social media">
        <ul>
          {SOCIAL_LINKS.map((link) => (
            <li key={link.name}>
              <a href={link.href} target="_blank" rel="noopener noreferrer">
                {link.name}
              </a>
            </li>
          ))}
        </ul>
      </nav>
    </footer>
  );
}
