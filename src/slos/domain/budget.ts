/**
 * Error budgets and burn rates from counts of good and total checks (issue 27's definitions),
 * and the multiwindow burn-rate alert rules. Pure: the counts come from analytics
 * (`GoodChecks`), the alert state from the SLO's stream.
 *
 * Every figure is a ratio of integers (the objective is held in thousandths of a percent), so it
 * is computed exactly and rounded once, half away from zero, to 3 decimals; alert rules compare
 * the exact ratios with their factors, never rounded figures.
 */
import type { BurnSeverity, BurnWindow, SloBurnAlertRecoveredData, SloBurnAlertTriggeredData } from './events.js';
import { BURN_WINDOWS, SLO_BURN_ALERT_RECOVERED, SLO_BURN_ALERT_TRIGGERED, SLO_BURN_INCIDENT_LINKED } from './events.js';
import type { SloEvent, SloState } from './slo.js';
import { objectiveMilli } from './slo.js';

export const WINDOW_MS: Readonly<Record<BurnWindow, number>> = {
  '5m': 300_000,
  '30m': 1_800_000,
  '1h': 3_600_000,
  '6h': 21_600_000,
  '24h': 86_400_000,
  '72h': 259_200_000,
};

export const DAY_MS = 86_400_000;

export interface Counts {
  total: number;
  good: number;
}

/** A burn-rate alert rule: both windows' burn rates above `factorTenths / 10`. */
export interface BurnRule {
  severity: BurnSeverity;
  long: BurnWindow;
  short: BurnWindow;
  factorTenths: number;
}

export const BURN_RULES: readonly BurnRule[] = [
  { severity: 'page', long: '1h', short: '5m', factorTenths: 144 },
  { severity: 'ticket', long: '6h', short: '30m', factorTenths: 60 },
];

/** The windows alerts are evaluated on. */
export const ALERT_WINDOWS: readonly BurnWindow[] = [...new Set(BURN_RULES.flatMap((r) => [r.long, r.short]))];

export type SloStatus = 'ok' | 'at_risk' | 'breached';

export interface SloFigures {
  good: number;
  total: number;
  sli_percent: number | null;
  error_budget: { allowed_bad: number | null; bad: number | null; remaining_percent: number | null };
  burn_rates: Record<BurnWindow, number | null>;
  status: SloStatus;
}

/** Parts per 100,000 of checks the objective allows to be bad (99.9 % -> 100). */
function budgetPer100k(objectivePercent: number): bigint {
  return BigInt(100_000 - objectiveMilli(objectivePercent));
}

/** numerator / denominator (integers, denominator > 0) rounded half away from zero to 3 decimals. */
export function round3(numerator: bigint, denominator: bigint): number {
  const negative = numerator < 0n;
  const n = negative ? -numerator : numerator;
  const rounded = (2n * n * 1000n + denominator) / (2n * denominator);
  const value = Number(rounded) / 1000;
  return negative && value !== 0 ? -value : value;
}

/** (bad / total) / (1 - objective): null without checks. */
export function burnRate(counts: Counts, objectivePercent: number): number | null {
  if (counts.total === 0) return null;
  const bad = BigInt(counts.total - counts.good);
  return round3(bad * 100_000n, BigInt(counts.total) * budgetPer100k(objectivePercent));
}

/** Whether the burn rate of `counts` is above (`sign` 1) or below (`sign` -1) factorTenths / 10, exactly. */
function compareBurn(counts: Counts, objectivePercent: number, factorTenths: number): number {
  const bad = BigInt(counts.total - counts.good);
  const left = bad * 100_000n * 10n;
  const right = BigInt(factorTenths) * BigInt(counts.total) * budgetPer100k(objectivePercent);
  return left > right ? 1 : left < right ? -1 : 0;
}

export function burnExceeds(counts: Counts, objectivePercent: number, factorTenths: number): boolean {
  return counts.total > 0 && compareBurn(counts, objectivePercent, factorTenths) > 0;
}

/** The short window "drops under the factor"; a window without checks burns nothing. */
export function burnBelow(counts: Counts, objectivePercent: number, factorTenths: number): boolean {
  return counts.total === 0 || compareBurn(counts, objectivePercent, factorTenths) < 0;
}

export function figuresOf(objectivePercent: number, window: Counts, burns: Record<BurnWindow, Counts>, alertActive: boolean): SloFigures {
  const burn_rates = Object.fromEntries(BURN_WINDOWS.map((w) => [w, burnRate(burns[w], objectivePercent)])) as Record<BurnWindow, number | null>;
  const { total, good } = window;
  if (total === 0) {
    return { good, total, sli_percent: null, error_budget: { allowed_bad: null, bad: null, remaining_percent: null }, burn_rates, status: 'ok' };
  }
  const per100k = budgetPer100k(objectivePercent);
  const bad = total - good;
  // allowed_bad = total * per100k / 100,000; remaining = 100 * (allowed - bad) / allowed.
  const allowedScaled = BigInt(total) * per100k;
  const remainingNumerator = 100n * (allowedScaled - BigInt(bad) * 100_000n);
  const breached = remainingNumerator <= 0n;
  return {
    good,
    total,
    sli_percent: round3(BigInt(good) * 100n, BigInt(total)),
    error_budget: {
      allowed_bad: round3(allowedScaled, 100_000n),
      bad,
      remaining_percent: round3(remainingNumerator, allowedScaled),
    },
    burn_rates,
    status: breached ? 'breached' : alertActive ? 'at_risk' : 'ok',
  };
}

export type BurnTransition =
  | { kind: 'trigger'; data: Omit<SloBurnAlertTriggeredData, 'slo_id' | 'team_id' | 'check_id' | 'endpoint_id' | 'triggered_at'> }
  | { kind: 'recover'; data: Omit<SloBurnAlertRecoveredData, 'slo_id' | 'team_id' | 'check_id' | 'recovered_at'> };

/**
 * The alert transitions the current burn rates call for: a rule not active triggers when both
 * its windows burn faster than its factor; an active one recovers once its short window burns
 * slower than the factor.
 */
export function burnTransitions(state: Pick<SloState, 'alerts' | 'objective_percent'>, counts: Partial<Record<BurnWindow, Counts>>): BurnTransition[] {
  const transitions: BurnTransition[] = [];
  const empty: Counts = { total: 0, good: 0 };
  for (const rule of BURN_RULES) {
    const long = counts[rule.long] ?? empty;
    const short = counts[rule.short] ?? empty;
    const active = state.alerts[rule.severity] !== null;
    if (!active && burnExceeds(long, state.objective_percent, rule.factorTenths) && burnExceeds(short, state.objective_percent, rule.factorTenths)) {
      transitions.push({
        kind: 'trigger',
        data: {
          severity: rule.severity,
          long_window: rule.long,
          long_burn_rate: burnRate(long, state.objective_percent)!,
          short_window: rule.short,
          short_burn_rate: burnRate(short, state.objective_percent)!,
        },
      });
    } else if (active && burnBelow(short, state.objective_percent, rule.factorTenths)) {
      transitions.push({ kind: 'recover', data: { severity: rule.severity, short_window: rule.short, short_burn_rate: burnRate(short, state.objective_percent) } });
    }
  }
  return transitions;
}

/**
 * The signal events one evaluation appends to the SLO's stream, decided on the stream's
 * current state (a deleted SLO decides nothing).
 */
export function decideBurn(state: SloState, counts: Partial<Record<BurnWindow, Counts>>, check: { check_id: number; endpoint_id: number }, at: string): SloEvent[] {
  if (!state.exists || state.deleted) return [];
  return burnTransitions(state, counts).map((t): SloEvent =>
    t.kind === 'trigger'
      ? { type: SLO_BURN_ALERT_TRIGGERED, data: { slo_id: state.slo_id, team_id: state.team_id, ...t.data, check_id: check.check_id, endpoint_id: check.endpoint_id, triggered_at: at } }
      : { type: SLO_BURN_ALERT_RECOVERED, data: { slo_id: state.slo_id, team_id: state.team_id, ...t.data, check_id: check.check_id, recovered_at: at } },
  );
}

/** Records which incident the alert triggered at `since` opened; once, and only while that alert is the active one. */
export function decideIncidentLink(state: SloState, severity: BurnSeverity, since: string, incidentId: number): SloEvent[] {
  const active = state.alerts[severity];
  if (!active || active.since !== since || active.incident_id !== null) return [];
  return [{ type: SLO_BURN_INCIDENT_LINKED, data: { slo_id: state.slo_id, severity, incident_id: incidentId, since } }];
}
