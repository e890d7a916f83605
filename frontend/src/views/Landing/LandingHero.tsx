import type { ReactElement } from 'react';
import { LandingVideo } from './LandingVideo';
import heroPoster from './media/hero-poster.webp';
import heroVideo from './media/hero.mp4';

/** Hero: what the product does, the call to action, the free-credits line, and the hero video (a Day to Night clip). */
export function LandingHero({ onStart }: { onStart: () => void }): ReactElement {
  return (
    <section className="hero" aria-labelledby="hero-title">
      <div className="hero-copy">
        <p className="eyebrow">For property and design teams</p>
        <h1 id="hero-title">Turn architectural renders into scroll-stopping video</h1>
        <p className="hero-lede">
          Upload your renders, describe the change you want or pick a camera move, and get AI images, 5-second clips
          and social-ready videos. Everything waits for your approval before a single credit is charged.
        </p>
        <div className="hero-actions">
          <button type="button" className="button button-primary button-large" onClick={onStart}>
            Start free
          </button>
          <a className="button button-secondary button-large" href="#pricing">
            See pricing
          </a>
        </div>
        <p className="hero-note">Free starting credits, no card required.</p>
      </div>
      <figure className="hero-art landing-video-frame">
        <LandingVideo src={heroVideo} poster={heroPoster} label="Hero video: a residential building rendered from day to night" name="hero video" className="landing-video" />
        <span className="landing-video-chip" aria-hidden="true">
          Day to Night · 5s
        </span>
        <span className="landing-video-chip landing-video-chip-ready" aria-hidden="true">
          Ready to approve
        </span>
      </figure>
    </section>
  );
}
