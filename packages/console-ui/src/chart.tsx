import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { DataTable } from './table';

/** Colours that meet 3:1 against white for lines and marks (WCAG 1.4.11), in a fixed order per series. */
const PALETTE = ['#0b57d0', '#b3261e', '#137333', '#8e4ec6', '#b06000', '#00838f', '#5f6368', '#c2185b'];

export interface Series {
  label: string;
  values: Array<number | null>;
}

/**
 * One time-series chart (uPlot on a canvas, bundled; no inline style or script, so the CSP stays strict) and the
 * same numbers as a table for keyboards and screen readers. Resizes with its box.
 */
export function TimeChart({
  id,
  title,
  times,
  series,
  unit,
}: {
  id: string;
  title: string;
  /** Bucket starts, seconds since the epoch. */
  times: number[];
  series: Series[];
  unit: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const plot = new uPlot(
      {
        width: el.clientWidth,
        height: 220,
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: PALETTE[i % PALETTE.length],
            width: 2,
            spanGaps: false,
            points: { show: times.length < 60 },
          })),
        ],
        axes: [{}, { label: unit, size: 60 }],
        legend: { live: false },
      },
      [times, ...series.map((s) => s.values)],
      el,
    );
    const resized = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: 220 }));
    resized.observe(el);
    return () => {
      resized.disconnect();
      plot.destroy();
    };
  }, [times, series, unit]);
  const shown = times.map((t, i) => [t, i] as const).filter(([, i]) => series.some((s) => s.values[i]));
  return (
    <figure class="chart" aria-labelledby={`${id}-title`}>
      <figcaption id={`${id}-title`}>{title}</figcaption>
      <div
        ref={box}
        class="chart-canvas"
        role="img"
        aria-label={`${title}: chart; the table below has the numbers`}
      />
      <details class="chart-data">
        <summary>Data</summary>
        <DataTable
          caption={title}
          rows={shown}
          rowKey={([t]) => String(t)}
          empty="Nothing in this window."
          columns={[
            { header: 'Time', cell: ([t]) => new Date(t * 1000).toLocaleString() },
            ...series.map((s) => ({
              header: s.label,
              cell: ([, i]: (typeof shown)[number]) => s.values[i] ?? '—',
            })),
          ]}
        />
      </details>
    </figure>
  );
}

/**
 * Rows of `{bucket, key, value}` as aligned series: one x per bucket of the window (empty ones included, so gaps
 * show as zero), one series per key.
 */
export function alignSeries<T>(
  rows: T[],
  buckets: number[],
  bucketOf: (row: T) => number,
  keyOf: (row: T) => string,
  valueOf: (row: T) => number,
  empty: number | null = 0,
): Series[] {
  const index = new Map(buckets.map((b, i) => [b, i]));
  const byKey = new Map<string, Array<number | null>>();
  for (const row of rows) {
    const i = index.get(bucketOf(row));
    if (i === undefined) continue;
    const values = byKey.get(keyOf(row)) ?? buckets.map(() => empty);
    values[i] = (values[i] ?? 0) + valueOf(row);
    byKey.set(keyOf(row), values);
  }
  return [...byKey].sort(([a], [b]) => a.localeCompare(b)).map(([label, values]) => ({ label, values }));
}

/** The starts of the `count` buckets of `stepSeconds` ending with the one holding `now` (seconds). */
export function bucketsUntil(now: number, stepSeconds: number, count: number): number[] {
  const last = Math.floor(now / stepSeconds) * stepSeconds;
  return Array.from({ length: count }, (_, i) => last - (count - 1 - i) * stepSeconds);
}
