import type { ReactElement } from 'react';
import { Icon, type IconName } from '../../components/Icon';

const FEATURES: { icon: IconName; title: string; text: string }[] = [
  {
    icon: 'sparkles',
    title: 'AI image edits',
    text: 'Describe the change (dusk light, snow, warmer interiors) and get an upscaled image that keeps your design intact.',
  },
  {
    icon: 'film',
    title: 'Video clips from a still',
    text: 'Zoom In, Pan, Drone Shot, Walk Through, Day to Night: five-second clips sized for YouTube, TikTok or Instagram.',
  },
  {
    icon: 'layers',
    title: 'Social videos, approved by you',
    text: 'Assemble up to five clips into one video for free. Nothing is charged until you approve it in your queue.',
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
