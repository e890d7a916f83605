import { useEffect, useRef, useSyncExternalStore, type ReactElement } from 'react';

const REDUCED_MOTION = '(prefers-reduced-motion: reduce)';

function subscribeReducedMotion(onChange: () => void): () => void {
  const query = window.matchMedia(REDUCED_MOTION);
  query.addEventListener('change', onChange);
  return () => query.removeEventListener('change', onChange);
}

/** The visitor's "reduce motion" setting, followed live. */
export function usePrefersReducedMotion(): boolean {
  return useSyncExternalStore(subscribeReducedMotion, () => window.matchMedia(REDUCED_MOTION).matches);
}

/**
 * A muted, looping, inline landing-page video that starts by itself, unless the visitor asked for reduced
 * motion: then it stays on its poster, with the player's controls to start it by choice.
 */
export function LandingVideo({ src, poster, label, className }: { src: string; poster: string; label: string; className?: string }): ReactElement {
  const ref = useRef<HTMLVideoElement>(null);
  const reducedMotion = usePrefersReducedMotion();

  useEffect(() => {
    const video = ref.current;
    if (!video) return;
    // React sets `muted` as a property only; autoplay rules read the attribute too
    video.muted = true;
    video.defaultMuted = true;
    if (reducedMotion) {
      video.pause();
      return;
    }
    // a browser that still refuses (data saver, power saving) keeps the poster: nothing to report
    video.play().catch(() => undefined);
  }, [reducedMotion]);

  return (
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
      autoPlay={!reducedMotion}
      controls={reducedMotion}
      preload={reducedMotion ? 'none' : 'auto'}
      disablePictureInPicture
    />
  );
}
