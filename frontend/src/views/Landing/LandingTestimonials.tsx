import type { ReactElement } from 'react';

/** The two partner testimonials (001 section 1). */
export const TESTIMONIALS: { quote: string; name: string; role: string; partner: string }[] = [
  {
    quote:
      'We used to wait two weeks for an animation studio. Now the marketing team turns the architects’ renders into launch clips the same afternoon, and nothing goes out before we approve it.',
    name: 'Aroha Ngata',
    role: 'Marketing Director',
    partner: 'Harbourline Developments',
  },
  {
    quote:
      'Day to Night on a single exterior render sold the penthouse campaign. Our clients see their building move before the ground is even broken.',
    name: 'James Whitfield',
    role: 'Principal Architect',
    partner: 'Whitfield Studio Architects',
  },
];

function initialsOf(name: string): string {
  return name
    .split(/\s+/)
    .map((part) => part[0] ?? '')
    .join('')
    .slice(0, 2)
    .toUpperCase();
}

export function LandingTestimonials(): ReactElement {
  return (
    <section id="testimonials" className="section" aria-labelledby="testimonials-title">
      <div className="section-heading">
        <p className="eyebrow">Partners</p>
        <h2 id="testimonials-title">Trusted by property and design teams</h2>
      </div>
      <div className="testimonial-grid">
        {TESTIMONIALS.map((t) => (
          <figure key={t.name} className="testimonial-card">
            <blockquote>
              <p>“{t.quote}”</p>
            </blockquote>
            <figcaption>
              <span className="testimonial-avatar" aria-hidden="true">
                {initialsOf(t.name)}
              </span>
              <span>
                <strong className="testimonial-name">{t.name}</strong>
                <span className="testimonial-role">
                  {t.role}, {t.partner}
                </span>
              </span>
            </figcaption>
          </figure>
        ))}
      </div>
    </section>
  );
}
