import type { ReactElement } from 'react';

/** Hero: what the product does, the call to action and the free-credits line. */
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
      <div className="hero-art" aria-hidden="true">
        <svg viewBox="0 0 480 340" role="presentation">
          <defs>
            <linearGradient id="hero-sky" x1="0" y1="0" x2="0" y2="1">
              <stop offset="0" stopColor="#1e1b4b" />
              <stop offset="0.55" stopColor="#7c3aed" />
              <stop offset="1" stopColor="#f59e0b" />
            </linearGradient>
            <linearGradient id="hero-glass" x1="0" y1="0" x2="1" y2="1">
              <stop offset="0" stopColor="#e0e7ff" stopOpacity="0.9" />
              <stop offset="1" stopColor="#a5b4fc" stopOpacity="0.5" />
            </linearGradient>
          </defs>
          <rect width="480" height="340" rx="20" fill="url(#hero-sky)" />
          <circle cx="372" cy="112" r="34" fill="#fde68a" opacity="0.85" />
          <path d="M60 300V150l90-40v190z" fill="#111827" opacity="0.92" />
          <path d="M150 300V110l110 30v160z" fill="#1f2937" />
          <path d="M260 300V170l150-30v160z" fill="#0f172a" opacity="0.95" />
          {[0, 1, 2, 3, 4].map((row) =>
            [0, 1, 2].map((col) => (
              <rect key={`${row}-${col}`} x={172 + col * 28} y={150 + row * 28} width="18" height="16" rx="2" fill="url(#hero-glass)" opacity={0.35 + ((row + col) % 3) * 0.2} />
            )),
          )}
          {[0, 1, 2].map((row) =>
            [0, 1, 2, 3].map((col) => (
              <rect key={`b-${row}-${col}`} x={282 + col * 30} y={190 + row * 30} width="20" height="18" rx="2" fill="#fbbf24" opacity={(row * 4 + col) % 3 === 0 ? 0.85 : 0.2} />
            )),
          )}
          <rect x="0" y="296" width="480" height="44" rx="0" fill="#0b1020" opacity="0.9" />
          <g transform="translate(28 24)">
            <rect width="172" height="34" rx="17" fill="#ffffff" opacity="0.92" />
            <circle cx="19" cy="17" r="9" fill="#4f46e5" />
            <path d="M16 12.5v9l7-4.5z" fill="#fff" />
            <text x="36" y="22" fontSize="13" fontWeight="600" fill="#1f2937" fontFamily="system-ui, sans-serif">
              Day to Night · 5s
            </text>
          </g>
          <g transform="translate(318 306)">
            <rect width="138" height="24" rx="12" fill="#22c55e" opacity="0.95" />
            <text x="69" y="16.5" textAnchor="middle" fontSize="12" fontWeight="600" fill="#052e16" fontFamily="system-ui, sans-serif">
              Ready to approve
            </text>
          </g>
        </svg>
      </div>
    </section>
  );
}
