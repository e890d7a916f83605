import { BarElement, CategoryScale, Chart as ChartJS, Legend, LinearScale, Tooltip, type ChartData, type ChartOptions } from 'chart.js';
import { useAtomValue } from 'jotai';
import type { ReactElement } from 'react';
import { Bar } from 'react-chartjs-2';
import type { WeeklyCreditUsage } from '../../api/billing';
import { weeklyUsageStateAtom } from '../../atoms/billing';
import { LoadingState } from '../../components/Spinner';
import { countText } from '../../components/countText';

ChartJS.register(CategoryScale, LinearScale, BarElement, Tooltip, Legend);

const WEEK_LABEL = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' });

/**
 * Chart data: credits in (bought and granted, admin corrections up) in one stack; credits out (spent per kind, taken
 * back by refunds, admin corrections down) in the other.
 */
export function usageChartData(weeks: WeeklyCreditUsage[]): ChartData<'bar', number[], string> {
  const labels = weeks.map((w) => WEEK_LABEL.format(new Date(`${w.weekStart}T00:00:00Z`)));
  return {
    labels,
    datasets: [
      { label: 'Added', data: weeks.map((w) => w.added), backgroundColor: '#16a34a', stack: 'added' },
      { label: 'Images', data: weeks.map((w) => w.spent.image), backgroundColor: '#4f46e5', stack: 'spent' },
      { label: 'Clips', data: weeks.map((w) => w.spent.clip), backgroundColor: '#0ea5e9', stack: 'spent' },
      { label: 'Assemblies', data: weeks.map((w) => w.spent.assembly), backgroundColor: '#f59e0b', stack: 'spent' },
      { label: 'Refunded', data: weeks.map((w) => w.refunded), backgroundColor: '#dc2626', stack: 'spent' },
      { label: 'Admin corrections (added)', data: weeks.map((w) => w.adjusted.added), backgroundColor: '#86efac', stack: 'added' },
      { label: 'Admin corrections (removed)', data: weeks.map((w) => w.adjusted.removed), backgroundColor: '#78716c', stack: 'spent' },
    ],
  };
}

/** A sentence for screen readers: the totals the bars show. */
export function usageSummary(weeks: WeeklyCreditUsage[]): string {
  const sum = (pick: (w: WeeklyCreditUsage) => number) => weeks.reduce((n, w) => n + pick(w), 0);
  const base = `Over the last ${weeks.length} weeks: ${countText(sum((w) => w.added), 'credit')} added; spent ${sum((w) => w.spent.image)} on images, ${sum((w) => w.spent.clip)} on clips and ${sum((w) => w.spent.assembly)} on assemblies`;
  const refunded = sum((w) => w.refunded);
  const adjustedUp = sum((w) => w.adjusted.added);
  const adjustedDown = sum((w) => w.adjusted.removed);
  const extra = [
    refunded > 0 ? `${countText(refunded, 'credit')} taken back by refunds` : '',
    adjustedUp > 0 || adjustedDown > 0 ? `admin corrections added ${adjustedUp} and removed ${adjustedDown}` : '',
  ].filter(Boolean);
  return extra.length > 0 ? `${base}; ${extra.join('; ')}.` : `${base}.`;
}

const OPTIONS: ChartOptions<'bar'> = {
  responsive: true,
  maintainAspectRatio: false,
  animation: false,
  plugins: { legend: { position: 'bottom', labels: { boxWidth: 12 } } },
  scales: { x: { stacked: true, grid: { display: false } }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
};

/** Credits added and spent per week by kind, drawn with chart.js (loaded with the Billing tab only). */
export default function CreditUsageChart(): ReactElement {
  const state = useAtomValue(weeklyUsageStateAtom);
  return (
    <section className="panel billing-panel" aria-labelledby="usage-heading">
      <h2 id="usage-heading">Credits per Week</h2>
      {state === undefined && <LoadingState label="Loading usage..." />}
      {state && !state.ok && <p className="credits-error">Unable to load usage</p>}
      {state?.ok && (
        <div className="usage-chart">
          <Bar data={usageChartData(state.data)} options={OPTIONS} role="img" aria-label={usageSummary(state.data)} />
        </div>
      )}
    </section>
  );
}
