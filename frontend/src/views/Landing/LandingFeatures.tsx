import type { ReactElement } from 'react';
import { Icon, type IconName } from '../../components/Icon';

/** The three feature cards (001 section 1): what a signed-in user makes from a render, and how they pay for it. */
export const FEATURES: { icon: IconName; title: string; text: string }[] = [
  {
    icon: 'sparkles',
    title: 'AI image edits',
    text: 'Describe the change (dusk light, snow, warmer interiors) and get an upscaled image that keeps your design intact.',
  },
  {
    icon: 'film',
    title: 'Video clips from a still',
    text: 'Bring to Life, Walk Through, Day to Night or Drone Shot: five-second clips sized for YouTube, Facebook, TikTok or Instagram.',
  },
  {
    icon: 'check',
    title: 'Approve before you pay',
    text: 'Every result waits in your approval queue as a watermarked preview. Credits are charged only for what you approve.',
  },
];

export function LandingFeatures(): ReactElement {
  return (
    <section id="features" className="section" aria-labelledby="features-title">
      <div className="section-heading">
        <p className="eyebrow">What you can make</p>
        <h2 id="features-title">From one render to a whole campaign</h2>
      </div>
      <div className="feature-grid">
        {FEATURES.map((f) => (
          <article key={f.title} className="feature-card">
            <span className="feature-icon">
              <Icon name={f.icon} size={22} />
            </span>
            <h3>{f.title}</h3>
            <p>{f.text}</p>
          </article>
        ))}
      </div>
    </section>
  );
}
