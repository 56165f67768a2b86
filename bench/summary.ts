/**
 * The run's targets in one table at the end of `pnpm bench`: each part of the bench records the rows it
 * measured, and {@link printSummary} prints them with their targets and PASS/MISS, so one run answers for every
 * target (a part that did not run shows `n/a`).
 */

/** One measured figure against its target. */
export interface TargetRow {
  /** What is measured, as the performance page names it. */
  label: string;
  /** The measured figure; undefined when its part did not run or failed. */
  value: number | undefined;
  /** The bound the figure must meet. */
  bound: number;
  /** `max`: the figure must be at most the bound; `min`: at least. */
  kind: 'max' | 'min';
  /** How to print the figure and the bound (a unit such as `×` or ` KB`). */
  unit?: string;
  digits?: number;
  /** A short note printed after the verdict (the sides, the spread). */
  note?: string;
}

const rows = new Map<string, TargetRow>();

/** Records (or replaces) the row of `label`. */
export function recordTarget(row: TargetRow): void {
  rows.set(row.label, row);
}

/** Whether a row's figure meets its target (undefined when not measured). */
export function met(row: TargetRow): boolean | undefined {
  if (row.value === undefined || Number.isNaN(row.value)) return undefined;
  return row.kind === 'max' ? row.value <= row.bound : row.value >= row.bound;
}

/** Prints every recorded row, in the order recorded, and returns how many missed. */
export function printSummary(): number {
  if (rows.size === 0) return 0;
  console.log('\nTargets of this run (issue #34), each a ratio or size measured in this run:\n');
  console.log('| | measured | target | |');
  console.log('|---|---|---|---|');
  let missed = 0;
  for (const row of rows.values()) {
    const verdict = met(row);
    if (verdict === false) missed += 1;
    const unit = row.unit ?? '×';
    const value =
      row.value === undefined || Number.isNaN(row.value)
        ? 'n/a'
        : `${row.value.toFixed(row.digits ?? 2)}${unit}`;
    const bound = `${row.kind === 'max' ? '≤' : '≥'} ${row.bound}${unit}`;
    const status = verdict === undefined ? 'n/a' : verdict ? 'PASS' : 'MISS';
    console.log(`| ${row.label} | ${value} | ${bound} | ${status}${row.note ? ` (${row.note})` : ''} |`);
  }
  return missed;
}
