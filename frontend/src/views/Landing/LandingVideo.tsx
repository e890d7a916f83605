import { useEffect, useRef, useState, useSyncExternalStore, type ReactElement, type RefObject } from 'react';
import { Icon } from '../../components/Icon';

const REDUCED_MOTION = '(prefers-reduced-motion: reduce)';
/** Share of the video that must be in view for it to play. */
const VISIBLE_SHARE = 0.25;

function subscribeReducedMotion(onChange: () => void): () => void {
  const query = window.matchMedia(REDUCED_MOTION);
  query.addEventListener('change', onChange);
  return () => query.removeEventListener('change', onChange);
}

/** The visitor's "reduce motion" setting, followed live. */
export function usePrefersReducedMotion(): boolean {
  return useSyncExternalStore(subscribeReducedMotion, () => window.matchMedia(REDUCED_MOTION).matches);
}

/** Whether enough of `ref` is in the viewport (IntersectionObserver; without one, always). */
function useOnScreen(ref: RefObject<Element | null>): boolean {
  const [onScreen, setOnScreen] = useState(() => typeof IntersectionObserver === 'undefined');
  useEffect(() => {
    const node = ref.current;
    if (!node || typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver(([entry]) => setOnScreen(entry.isIntersecting && entry.intersectionRatio >= VISIBLE_SHARE), { threshold: [0, VISIBLE_SHARE, 1] });
    observer.observe(node);
    return () => observer.disconnect();
  }, [ref]);
  return onScreen;
}

interface LandingVideoProps {
  src: string;
  poster: string;
  /** the video's accessible name (what it shows) */
  label: string;
  /** what the pause and play buttons call it, e.g. 'hero video' */
  name: string;
  className?: string;
}

/**
 * A muted, looping, inline landing-page video. It plays only while it is on screen, and only if the visitor has not
 * paused it or asked for reduced motion (then it stays on its poster until they press Play). The Pause / Play button
 * is always there (WCAG 2.2.2: moving content that starts by itself can be paused).
 */
export function LandingVideo({ src, poster, label, name, className }: LandingVideoProps): ReactElement {
  const ref = useRef<HTMLVideoElement>(null);
  const reducedMotion = usePrefersReducedMotion();
  // the visitor's own choice wins over the default from the motion setting
  const [choice, setChoice] = useState<'play' | 'pause' | null>(null);
  const onScreen = useOnScreen(ref);
  const wantsToPlay = choice === null ? !reducedMotion : choice === 'play';
  const playing = wantsToPlay && onScreen;

  useEffect(() => {
    const video = ref.current;
    if (!video) return;
    // React sets `muted` as a property only; autoplay rules read the attribute too
    video.muted = true;
    video.defaultMuted = true;
    if (!playing) {
      video.pause();
      return;
    }
    video.play().catch((err: unknown) => {
      // a browser that refuses to start it by itself (data saver, power saving) keeps the poster and offers Play
      if (err instanceof DOMException && err.name === 'NotAllowedError') setChoice((current) => current ?? 'pause');
    });
  }, [playing]);

  return (
    <div className="landing-video-box">
      <video
        ref={ref}
        className={className}
        src={src}
        poster={poster}
        aria-label={label}
        width={1280}
        height={720}
        muted
        loop
        playsInline
        preload={reducedMotion && choice !== 'play' ? 'none' : 'auto'}
        disablePictureInPicture
      />
      <button type="button" className="landing-video-toggle" onClick={() => setChoice(wantsToPlay ? 'pause' : 'play')}>
        <Icon name={wantsToPlay ? 'pause' : 'play'} size={18} />
        <span className="visually-hidden">{wantsToPlay ? `Pause the ${name}` : `Play the ${name}`}</span>
      </button>
    </div>
  );
}
