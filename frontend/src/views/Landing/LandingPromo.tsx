import type { ReactElement } from 'react';
import { LandingVideo } from './LandingVideo';
import demoPoster from './media/demo-poster.webp';
import demoVideo from './media/demo.mp4';

const STEPS: { title: string; text: string }[] = [
  { title: 'Upload a render', text: 'Drop in the stills you already have: JPG, PNG, GIF or WEBP.' },
  { title: 'Pick a camera move', text: 'Walk Through, Drone Shot, Day to Night or Bring to Life, sized for the platform you post to.' },
  { title: 'Approve what you like', text: 'Every clip waits in your approval queue. Credits are charged only when you approve it.' },
];

/** The promo section: the demo video (a Walk Through clip made from one interior render) and the three steps behind it. */
export function LandingPromo(): ReactElement {
  return (
    <section id="promo" className="section section-tinted promo" aria-labelledby="promo-title">
      <div className="promo-grid">
        <figure className="landing-video-frame promo-video">
          <LandingVideo src={demoVideo} poster={demoPoster} label="Demo video: a Walk Through clip made from one interior render" name="demo video" className="landing-video" />
          <figcaption className="promo-caption">Made from one interior render with the Walk Through effect.</figcaption>
        </figure>
        <div className="promo-copy">
          <p className="eyebrow">See it in action</p>
          <h2 id="promo-title">One still in, a five-second clip out</h2>
          <ol className="promo-steps">
            {STEPS.map((step, i) => (
              <li key={step.title}>
                <span className="promo-step-number" aria-hidden="true">
                  {i + 1}
                </span>
                <div>
                  <h3>{step.title}</h3>
                  <p>{step.text}</p>
                </div>
              </li>
            ))}
          </ol>
        </div>
      </div>
    </section>
  );
}
