import type { RecordedEvent } from '../../../platform/event-store/event-store.port.js';
import type { Doc } from '../../../platform/read-store/read-store.port.js';
import { defineProjection, type ViewTransaction } from '../../../platform/projections/projection.js';
import { CHECK_RECORDED, isApplicable, type CheckRecordedData } from '../../../checks/domain/check.js';
import { CHECKS_SUMMARIZED, hourRegion, type ChecksSummarizedData } from '../../../checks/domain/check-summary.js';
import { DEFAULT_REGION } from '../../../platform/config/region.js';
import { ENDPOINT_RECONFIGURED, ENDPOINT_REGISTERED, type EndpointReconfiguredData, type EndpointRegisteredData } from '../../../monitoring/domain/events.js';
import { addAccumulator, addCheck, emptyAccumulator, type Accumulator } from '../../domain/aggregate.js';
import { GRANULARITIES, ROLLUP_SCOPE_KINDS, checkOfRow, counted as isCounted, packedHoursOf, rawCheckRow, regionRollupId, regionRollupRangeAll, rollupId, rollupIdsOf, rollupKeysOf, rollupRangeAll, scopeOfRollupIdAt, withCheck, withHoursPacked, withSums, withoutSums } from '../../domain/rollup.js';
import { GRANULARITY_MS, floorTo, type Granularity } from '../../domain/range-plan.js';
import {
  APPLICABLE_OUTCOMES,
  OUTCOME_SUCCESS,
  CHECK_MINUTES_COLLECTION,
  CHECK_MINUTE_COLUMNS,
  RAW_CHECKS_COLLECTION,
  RAW_CHECK_COLUMNS,
  REGION_CHECKS_COLLECTION,
  REGION_CHECK_COLUMNS,
  ROLLUPS_COLLECTION,
  ROLLUPS_PROJECTION,
  ROLLUP_COLUMNS,
  ROLLUP_MEMBERS_COLLECTION,
  ROLLUP_MEMBER_COLUMNS,
  rawStatusCode,
  type CheckMinuteRow,
  type RawCheckRow,
  type RegionCheckRow,
  type RollupMemberDoc,
  type RollupRow,
  type SummarizedRegion,
  type TeamDoc,
  checkMinuteOf,
  storedTeamId,
  widenedCheckMinute,
  teamDocId,
} from './view.js';

/**
 * Analytics rollups: per endpoint, project and team, minute/hour/day sums of applicable checks,
 * plus a raw row of every retained check (for sub-minute range edges and p95, and for monitoring's
 * checks list). Manual and suppressed checks are left out of the rollups and have raw rows of
 * their own outcomes, which no analytics read asks for. A check counts for its
 * endpoint's CURRENT project: the endpoint's project is kept here (`analytics_members`, from the
 * monitoring events, in log order with the checks), and a move takes the endpoint's share of
 * the project rows and its raw rows to the new project (`onEndpointMoved`). An endpoint with
 * checks from several probe regions also has rows per region (views.ts, "Probe regions").
 */
export async function onCheckRecorded(event: RecordedEvent<CheckRecordedData>, views: ViewTransaction): Promise<void> {
  // A check already recorded (same check id) must never be added twice.
  if (await views.get(RAW_CHECKS_COLLECTION, String(event.data.check_id))) return;
  if (!isApplicable(event.data)) {
    // Listed, never counted: its row only, labelled with the endpoint's current project (moves
    // relabel every row of the endpoint), without making a member (only counted checks do).
    const member = (await views.get(ROLLUP_MEMBERS_COLLECTION, String(event.data.endpoint_id))) as RollupMemberDoc | null;
    const projectId = member?.project_id ?? event.data.project_id;
    const listed = rawCheckRow(event.data, projectId, await rowTeamId(views, event.data.team_id, projectId));
    views.put(RAW_CHECKS_COLLECTION, listed as unknown as Doc);
    await widenCheckMinute(views, listed);
    return;
  }
  const member = await memberOf(views, event.data.endpoint_id, event.data.project_id);
  // Put as it is made, like the rollup rows below (no spread copy: see there).
  const row = rawCheckRow(event.data, member.project_id, await rowTeamId(views, event.data.team_id, member.project_id));
  const region = event.data.region ?? DEFAULT_REGION;
  // Before this check's sums are added: a split copies the endpoint's rows as they were.
  const perRegion = await addRegions(views, member, [region]);
  views.put(RAW_CHECKS_COLLECTION, row as unknown as Doc);
  await widenCheckMinute(views, row);
  // Nine ids, no key object each: the ids and their scope by place are all the handler needs.
  const ids = rollupIdsOf({ team_id: event.data.team_id, project_id: row.project_id, endpoint_id: row.endpoint_id, checked_at_ms: row.checked_at_ms });
  for (let i = 0; i < ids.length; i++) {
    const existing = (await views.get(ROLLUPS_COLLECTION, ids[i])) as RollupRow | null;
    // withCheck and withSums build a new row: it is put as it is. A spread copy of it cost a
    // copy and, since V8 freezes a spread of an unfrozen object about ten times slower than a
    // literal, the larger part of this handler's time (the batch freezes each put document).
    views.put(ROLLUPS_COLLECTION, withCheck(existing, ids[i], row, scopeOfRollupIdAt(i)) as unknown as Doc);
  }
  if (perRegion) {
    views.put(REGION_CHECKS_COLLECTION, { ...regionCheckRow(row, region) });
    for (const granularity of GRANULARITIES) {
      const id = regionRollupId(row.endpoint_id, region, granularity, floorTo(row.checked_at_ms, GRANULARITY_MS[granularity]) / 1000);
      const existing = (await views.get(ROLLUPS_COLLECTION, id)) as RollupRow | null;
      views.put(ROLLUPS_COLLECTION, withCheck(existing, id, row) as unknown as Doc);
    }
  }
}

/** The raw row's minute in the time -> key map (`CHECK_MINUTES_COLLECTION`) takes in its key. */
async function widenCheckMinute(views: ViewTransaction, row: RawCheckRow): Promise<void> {
  const existing = (await views.get(CHECK_MINUTES_COLLECTION, String(checkMinuteOf(row.checked_at_ms)))) as CheckMinuteRow | null;
  const widened = widenedCheckMinute(existing, row);
  if (widened) views.put(CHECK_MINUTES_COLLECTION, widened as unknown as Doc);
}

/**
 * The endpoint's member document: the project its checks count for now and its regions. An
 * endpoint this view has not seen registered (a log that starts with its checks) counts for the
 * project its first check names until a monitoring event says otherwise.
 */
async function memberOf(views: ViewTransaction, endpointId: number, recordedUnder: number): Promise<RollupMemberDoc> {
  const member = (await views.get(ROLLUP_MEMBERS_COLLECTION, String(endpointId))) as RollupMemberDoc | null;
  if (member) return member;
  const created: RollupMemberDoc = { id: String(endpointId), endpoint_id: endpointId, project_id: recordedUnder };
  views.put(ROLLUP_MEMBERS_COLLECTION, { ...created });
  return created;
}

/** The team id a raw row of the team in `projectId` stores: none in the team's primary project (`TeamDoc`). */
async function rowTeamId(views: ViewTransaction, teamId: number, projectId: number): Promise<number | null> {
  return storedTeamId(await teamOf(views, teamId, projectId), projectId);
}

/**
 * The team's document (`TeamDoc`). The first event of the team that names a project makes it
 * the primary one: an endpoint's registration (or move), or a check of a log that starts with
 * its checks. Registrations are never pruned, so a rebuild after retention picks the same one.
 */
async function teamOf(views: ViewTransaction, teamId: number, projectId: number): Promise<TeamDoc> {
  const id = teamDocId(teamId);
  const team = (await views.get(ROLLUP_MEMBERS_COLLECTION, id)) as TeamDoc | null;
  if (team) return team;
  const created: TeamDoc = { id, team_id: teamId, primary_project_id: projectId };
  views.put(ROLLUP_MEMBERS_COLLECTION, created as unknown as Doc);
  return created;
}

/**
 * Adds the regions the member does not name yet (and puts it then); true when the endpoint keeps
 * rows per region (checks from two regions or more). When a second region appears, the
 * endpoint's rows so far are all of the first one: they are copied as its rows (rollups and
 * raw), once. Call before adding the sums of the event that brings the new region.
 */
async function addRegions(views: ViewTransaction, member: RollupMemberDoc, regions: string[]): Promise<boolean> {
  const known = [...(member.regions ?? [])];
  for (const region of regions) {
    if (known.includes(region)) continue;
    if (known.length === 1) await splitByRegion(views, member.endpoint_id, known[0]);
    known.push(region);
  }
  if (known.length > (member.regions?.length ?? 0)) views.put(ROLLUP_MEMBERS_COLLECTION, { ...member, regions: known.sort() });
  return known.length > 1;
}

/** The endpoint's rollup and raw rows, all of one region so far, copied as that region's. */
async function splitByRegion(views: ViewTransaction, endpointId: number, region: string): Promise<void> {
  for (const granularity of GRANULARITIES) {
    const range = rollupRangeAll('endpoint', endpointId, granularity);
    const target = regionRollupRangeAll(endpointId, region, granularity).gte;
    const rows = (await views.find(ROLLUPS_COLLECTION, { filter: { id: range } })) as unknown as RollupRow[];
    for (const row of rows) views.put(ROLLUPS_COLLECTION, { ...row, id: `${target}${row.id.slice(range.gte.length)}` });
  }
  // Counted checks only: region rows serve analytics alone.
  const raw = (await views.find(RAW_CHECKS_COLLECTION, { filter: { endpoint_id: endpointId, outcome: { in: APPLICABLE_OUTCOMES } } })) as unknown as RawCheckRow[];
  for (const row of raw) views.put(REGION_CHECKS_COLLECTION, { ...regionCheckRow(row, region) });
}

function regionCheckRow(row: RawCheckRow, region: string): RegionCheckRow {
  return { id: row.id, check_id: row.check_id, endpoint_id: row.endpoint_id, region, checked_at_ms: row.checked_at_ms, success: row.outcome === OUTCOME_SUCCESS, status_code: rawStatusCode(row), latency_ms: row.latency_ms };
}

async function onEndpointRegistered(event: RecordedEvent<EndpointRegisteredData>, views: ViewTransaction): Promise<void> {
  await onEndpointMoved(event.data.endpoint_id, event.data.team_id, event.data.project_id, views);
}

async function onEndpointReconfigured(event: RecordedEvent<EndpointReconfiguredData>, views: ViewTransaction): Promise<void> {
  const projectId = event.data.changes.project_id;
  if (projectId !== undefined) await onEndpointMoved(event.data.endpoint_id, event.data.team_id, projectId, views);
}

/**
 * The endpoint is in `projectId` now. When it was counted for another project, every rollup row
 * of the endpoint is taken out of that project's row of the same period and added to the new
 * project's, and its raw rows (every outcome) are relabelled (p95 and range edges read them by project). Costs
 * the endpoint's own row count, once per move; reads never pay for membership. A project row
 * that is already gone (a minute past the retention horizon, deleted with another endpoint's
 * summary; such minutes are never read) has nothing to take back.
 */
async function onEndpointMoved(endpointId: number, teamId: number, projectId: number, views: ViewTransaction): Promise<void> {
  const id = String(endpointId);
  const member = (await views.get(ROLLUP_MEMBERS_COLLECTION, id)) as RollupMemberDoc | null;
  views.put(ROLLUP_MEMBERS_COLLECTION, { ...member, id, endpoint_id: endpointId, project_id: projectId });
  const team = await teamOf(views, teamId, projectId);
  if (!member || member.project_id === projectId) return;
  const from = member.project_id;
  /** The endpoint's sums of one period leave the old project's row of it for the new one's. */
  const moveShare = async (granularity: Granularity, startSeconds: number, sums: Accumulator) => {
    const oldId = rollupId('project', from, granularity, startSeconds);
    const newId = rollupId('project', projectId, granularity, startSeconds);
    const old = (await views.get(ROLLUPS_COLLECTION, oldId)) as RollupRow | null;
    if (old) {
      const left = withoutSums(old, sums);
      if (left) views.put(ROLLUPS_COLLECTION, { ...left });
      else views.delete(ROLLUPS_COLLECTION, oldId);
    }
    const existing = (await views.get(ROLLUPS_COLLECTION, newId)) as RollupRow | null;
    views.put(ROLLUPS_COLLECTION, withSums(existing, newId, sums, 'project') as unknown as Doc);
  };
  for (const granularity of GRANULARITIES) {
    const range = rollupRangeAll('endpoint', endpointId, granularity);
    const rows = (await views.find(ROLLUPS_COLLECTION, { filter: { id: range } })) as unknown as RollupRow[];
    for (const row of rows) {
      const start = (Number(row.id.slice(range.gte.length)) * GRANULARITY_MS[granularity]) / 1000;
      await moveShare(granularity, start, row);
      // The hours retention packed into the day row: the project keeps rows of those hours.
      if (row.hours !== undefined) for (const hour of packedHoursOf(row, start)) await moveShare('hour', hour.start, hour.sums);
    }
  }
  const teamIdOfRows = storedTeamId(team, projectId);
  const raw = (await views.find(RAW_CHECKS_COLLECTION, { filter: { endpoint_id: endpointId } })) as unknown as RawCheckRow[];
  for (const row of raw) views.put(RAW_CHECKS_COLLECTION, { ...row, project_id: projectId, team_id: teamIdOfRows });
}

/**
 * Retention: the summarized checks leave the raw rows (every outcome: the list no longer shows
 * them), and so do the minute rollups they were in (past the horizon analytics counts whole
 * hours); hour and day rollups keep their sums. Counted rows (outcomes 0 and 1) this view still
 * holds were counted when their CheckRecorded was applied; the summary adds only
 * the rest of each hour (its checks, failures and latency sum minus those rows'; its minimum and
 * maximum cover every check of the hour, so combining them is exact either way). So the rollups
 * are the same whether the raw events were applied before (live, or a rebuild of a log a crash
 * left them in) or are gone from the log (a rebuild after the prune).
 */
export async function onChecksSummarized(event: RecordedEvent<ChecksSummarizedData>, views: ViewTransaction): Promise<void> {
  const summary = event.data;
  // Like a check, a summary counts for the endpoint's current project.
  const member = await memberOf(views, summary.endpoint_id, summary.hours[0]?.[1] ?? 0);
  const projectId = member.project_id;
  const ids: Record<(typeof ROLLUP_SCOPE_KINDS)[number], number> = { endpoint: summary.endpoint_id, project: projectId, team: summary.team_id };
  // The summarized checks' regions count as seen (a rebuild after the prune sees no other trace of them).
  const perRegion = await addRegions(views, member, [...new Set(summary.hours.filter((h) => h[2] > 0).map(hourRegion))]);
  const regions = (await keepSummarizedRegions(views, summary)).regions ?? [];
  const counted = new Map<number, Accumulator>();
  const countedInRegion = new Map<string, Accumulator>();
  // By id, not by query: a batch's query also scans every write pending in the batch, which a
  // rebuild (thousands of writes per batch) cannot afford once per summary.
  for (const checkId of summary.check_ids) {
    const row = (await views.get(RAW_CHECKS_COLLECTION, String(checkId))) as RawCheckRow | null;
    if (row) {
      if (isCounted(row)) {
        const hour = Math.floor(row.checked_at_ms / 3_600_000) * 3600;
        counted.set(hour, addCheck(counted.get(hour) ?? emptyAccumulator(), checkOfRow(row)));
      }
      views.delete(RAW_CHECKS_COLLECTION, row.id);
    }
    const regional = perRegion ? ((await views.get(REGION_CHECKS_COLLECTION, String(checkId))) as RegionCheckRow | null) : null;
    if (regional) {
      const key = `${Math.floor(regional.checked_at_ms / 3_600_000) * 3600}:${regional.region}`;
      countedInRegion.set(key, addCheck(countedInRegion.get(key) ?? emptyAccumulator(), regional));
      views.delete(REGION_CHECKS_COLLECTION, regional.id);
    }
  }
  // The summarized hours' rows (the endpoint's, each region's), moved into their day rows at the end.
  const summarizedHours: SummarizedHour[] = [];
  for (const { hour, sums, minutes, byRegion } of hoursOf(summary)) {
    // The minute rows the summarized checks were in go, for the endpoint, its current project
    // and its team (and each of the endpoint's regions), whether or not this view still saw the
    // raw checks (a rebuild after the prune does not): what is deleted depends on the summary
    // (and the endpoint's project and regions) alone, so a live view and a rebuilt one end the
    // same. By id (deleting a missing one is a no-op).
    for (const scope of ROLLUP_SCOPE_KINDS) {
      for (const minute of minutes) views.delete(ROLLUPS_COLLECTION, rollupId(scope, ids[scope], 'minute', hour + minute * 60));
    }
    const day = floorTo(hour * 1000, GRANULARITY_MS.day) / 1000;
    if (perRegion) {
      for (const region of regions) {
        for (const minute of minutes) views.delete(ROLLUPS_COLLECTION, regionRollupId(summary.endpoint_id, region, 'minute', hour + minute * 60));
      }
      for (const [region, regionSums] of byRegion) {
        const rest = restOf(regionSums, countedInRegion.get(`${hour}:${region}`));
        if (!rest) continue;
        for (const granularity of ['hour', 'day'] as const) {
          const id = regionRollupId(summary.endpoint_id, region, granularity, granularity === 'day' ? day : hour);
          const existing = (await views.get(ROLLUPS_COLLECTION, id)) as RollupRow | null;
          views.put(ROLLUPS_COLLECTION, withSums(existing, id, rest) as unknown as Doc);
        }
      }
      for (const region of regions) {
        summarizedHours.push({ hourId: regionRollupId(summary.endpoint_id, region, 'hour', hour), dayId: regionRollupId(summary.endpoint_id, region, 'day', day), hour });
      }
    }
    const rest = restOf(sums, counted.get(hour));
    if (rest) {
      const at = { team_id: summary.team_id, project_id: projectId, endpoint_id: summary.endpoint_id, checked_at_ms: hour * 1000 };
      for (const key of rollupKeysOf(at)) {
        if (key.granularity === 'minute') continue;
        const existing = (await views.get(ROLLUPS_COLLECTION, key.id)) as RollupRow | null;
        views.put(ROLLUPS_COLLECTION, withSums(existing, key.id, rest, key.scope) as unknown as Doc);
      }
    }
    // Whatever this view had counted of the hour, and the rest just added: all of it moves into
    // the day row, as a rebuild after the prune (which counts it from the summary) does too.
    summarizedHours.push({ hourId: rollupId('endpoint', summary.endpoint_id, 'hour', hour), dayId: rollupId('endpoint', summary.endpoint_id, 'day', day), hour });
  }
  await packHourRows(views, summarizedHours);
}

/** A summarized hour's row (an endpoint's or a region's) and its day's. */
interface SummarizedHour {
  hourId: string;
  dayId: string;
  /** Epoch seconds. */
  hour: number;
}

/**
 * Retention summarized these hours: each one's row, if any, moves into its day row's packed
 * hours (`withHoursPacked`; "Packed hours" in domain/rollup.ts), each day row rewritten once. The
 * day row's sums counted them already, and a row of an hour exists only beside its day's.
 */
async function packHourRows(views: ViewTransaction, hours: SummarizedHour[]): Promise<void> {
  const byDay = new Map<string, Array<{ hourSeconds: number; sums: RollupRow }>>();
  for (const { hourId, dayId, hour } of hours) {
    const row = (await views.get(ROLLUPS_COLLECTION, hourId)) as RollupRow | null;
    if (!row) continue;
    const moved = byDay.get(dayId) ?? [];
    moved.push({ hourSeconds: hour, sums: row });
    byDay.set(dayId, moved);
    views.delete(ROLLUPS_COLLECTION, hourId);
  }
  for (const [dayId, rows] of byDay) {
    const day = (await views.get(ROLLUPS_COLLECTION, dayId)) as RollupRow | null;
    if (!day) throw new Error(`Rollup rows of hours of ${dayId} have no day row`);
    views.put(ROLLUPS_COLLECTION, withHoursPacked(day, rows) as unknown as Doc);
  }
}

/**
 * Each region's newest summarized check and trailing failures, on the endpoint's member document
 * (a summary without `regions` speaks of `local` alone); returns the document.
 */
async function keepSummarizedRegions(views: ViewTransaction, summary: ChecksSummarizedData): Promise<RollupMemberDoc> {
  const member = (await views.get(ROLLUP_MEMBERS_COLLECTION, String(summary.endpoint_id))) as unknown as RollupMemberDoc;
  const facts =
    summary.regions ??
    (summary.latest_applicable ? { [DEFAULT_REGION]: { latest_applicable: summary.latest_applicable, any_success: summary.any_success, trailing_failures: summary.trailing_failures } } : {});
  if (Object.keys(facts).length === 0) return member;
  const kept: Record<string, SummarizedRegion> = { ...member.summarized_regions };
  for (const [region, { latest_applicable: latest, any_success, trailing_failures }] of Object.entries(facts)) {
    const before = Object.hasOwn(kept, region) ? kept[region] : undefined;
    const at = Date.parse(latest.checked_at);
    const newer = !before || at > before.checked_at_ms || (at === before.checked_at_ms && latest.check_id > before.check_id);
    const newest = newer ? { check_id: latest.check_id, checked_at_ms: at, success: latest.success, status_code: latest.status_code, latency_ms: latest.latency_ms } : before;
    kept[region] = { ...newest, trailing_failures: any_success ? trailing_failures : (before?.trailing_failures ?? 0) + trailing_failures };
  }
  const updated: RollupMemberDoc = { ...member, summarized_regions: kept };
  views.put(ROLLUP_MEMBERS_COLLECTION, { ...updated });
  return updated;
}

/**
 * What a summary's sums of an hour add beyond the rows this view already counted (null when
 * nothing): the counts and sums minus those rows'; the summary's minimum and maximum cover every
 * check of the hour, so combining them is exact either way.
 */
function restOf(sums: Accumulator, already: Accumulator = emptyAccumulator()): Accumulator | null {
  if (sums.checks - already.checks <= 0) return null;
  return {
    checks: sums.checks - already.checks,
    failures: sums.failures - already.failures,
    latency_sum: sums.latency_sum - already.latency_sum,
    latency_min: sums.latency_min,
    latency_max: sums.latency_max,
  };
}

/**
 * A summary's sums per hour, and per hour and region. A summary splits an hour by the project
 * its checks were recorded under (an endpoint moved within the hour) and by region; here they
 * all count for the endpoint's current project, so the parts of an hour are added up.
 */
function hoursOf(summary: ChecksSummarizedData): Array<{ hour: number; sums: Accumulator; minutes: number[]; byRegion: Map<string, Accumulator> }> {
  const byHour = new Map<number, { hour: number; sums: Accumulator; minutes: Set<number>; byRegion: Map<string, Accumulator> }>();
  for (const part of summary.hours) {
    const [hour, , checks, failures, latencySum, latencyMin, latencyMax, minutes] = part;
    const entry = byHour.get(hour) ?? { hour, sums: emptyAccumulator(), minutes: new Set<number>(), byRegion: new Map<string, Accumulator>() };
    const sums: Accumulator = { checks, failures, latency_sum: latencySum, latency_min: latencyMin, latency_max: latencyMax };
    addAccumulator(entry.sums, sums);
    const region = hourRegion(part);
    entry.byRegion.set(region, addAccumulator(entry.byRegion.get(region) ?? emptyAccumulator(), sums));
    for (const minute of minutes) entry.minutes.add(minute);
    byHour.set(hour, entry);
  }
  return [...byHour.values()].map(({ hour, sums, minutes, byRegion }) => ({ hour, sums, minutes: [...minutes], byRegion }));
}

/**
 * What `onCheckRecorded` reads by id, for the runner to read a batch's at once: the raw row (a
 * check recorded already), the member, and, for a counted check, the nine rollup rows of the
 * project the check was recorded under (its endpoint's current one unless it moved since; then
 * the rows it really reads are read when asked for, as are a regional endpoint's).
 */
function readsOfCheck(event: RecordedEvent): Array<[string, string]> {
  if (event.type !== CHECK_RECORDED) return [];
  const check = event.data as CheckRecordedData;
  const reads: Array<[string, string]> = [
    [RAW_CHECKS_COLLECTION, String(check.check_id)],
    [ROLLUP_MEMBERS_COLLECTION, String(check.endpoint_id)],
    [ROLLUP_MEMBERS_COLLECTION, teamDocId(check.team_id)],
    [CHECK_MINUTES_COLLECTION, String(checkMinuteOf(Date.parse(check.checked_at)))],
  ];
  if (!isApplicable(check)) return reads;
  for (const id of rollupIdsOf({ team_id: check.team_id, project_id: check.project_id, endpoint_id: check.endpoint_id, checked_at_ms: Date.parse(check.checked_at) })) reads.push([ROLLUPS_COLLECTION, id]);
  return reads;
}

export const analyticsRollupsProjection = defineProjection({
  name: ROLLUPS_PROJECTION,
  // 2: no project rollups and no project_id in the raw rows (projects are summed from their
  // endpoints at query time); rollup rows hold their sums under a short id and nothing else
  // (they stay for ever: issue 12's steady state); typed columns declared.
  // 3: raw rows without `minute` and its two indexes (edges are read by checked_at_ms).
  // 4: project rollups (counts and sums) and raw rows labelled with the endpoint's current
  // project, both moved with the endpoint; the endpoints' projects kept here (issue 32: a
  // project's cost no longer grows with its endpoint count).
  // 5: probe regions (issue 25): each endpoint's regions, and rows per region for endpoints
  // with checks from several.
  // 6: raw and region rows keyed by their check id (`idField`: SQLite keeps it once, as the
  // row's integer key, and the indexes end at checked_at_ms, their entries ending with the key).
  // 7 (withdrawn): no team index on the raw rows, a team read through its projects' rows. A team
  // of 100 projects then took 4-19 times the CPU per request (docs/benchmarks.md, "A team of 100
  // projects"), so 8 is 6's shape again, under a new version so a v7 view is rebuilt.
  // 9 (issue 31): the raw rows hold every retained check, `outcome` (0/1 applicable failure or
  // success, 2/3 manual or suppressed) in place of `success` in the row and its indexes, and
  // the fields monitoring's checks list shows: one row and one insert a check instead of a row
  // here and another in monitoring's checks view (docs/architecture.md, "One per-check table").
  // 10 (withdrawn): 11's sparse team index, but the rows of a one-project team left `team_id`
  // null and a second project rewrote every row of the team in one transaction (unbounded).
  // 11 (issue 31): each team's primary project (`TeamDoc`, the first its rows name) keeps
  // `team_id` null on its rows for ever; the team index is sparse (about 19 B a check less for a
  // one-project team), a team read merges the primary project's range of the project index with
  // the team index's (`rawScopesOf`); no step rewrites more than a move's own endpoint's rows.
  // 12 (issue 31): the hours retention summarized leave their rows for their day row's packed
  // `hours` (endpoints and regions; "Packed hours" in domain/rollup.ts): past the horizon about
  // 12 B an endpoint-hour instead of 35. Ids and columns unchanged and the readers add hour rows
  // and packed hours, so 11's rows read right: it keeps serving while 12 is rebuilt (no 503).
  // 13 (issue 31): a raw row's status code NULL for 200 and its two timings NULL when equal to
  // its latency (`rawStatusCode`, `rawTimings`: about 3.5 B a check). Its readers read 12's rows
  // (every value written) the same, and 12 reads only its own tables: it serves while 13 is rebuilt.
  // 14 (issue 31): those three in one column, `status_and_timings`, NULL when all hold their
  // default and packed otherwise (`packStatusAndTimings`): each column cost its header byte even
  // when NULL (2 B a check less). Its readers read 13's columns as before: 13 serves while 14 is rebuilt.
  // 15 (issue 31): no project index on the raw rows (about 19 B a check). A project's rows of a
  // time span are read as a key range of the raw table from the time -> key map
  // (`CHECK_MINUTES_COLLECTION`, new), or through the endpoint index over its endpoints when
  // that is cheaper (`RawSpans` in queries.ts); p95 reads spans back from the range's end. Its
  // readers read 14's generation through 14's project index (no map there), so 14 serves
  // while 15 is rebuilt.
  version: 15,
  // v8's raw rows have `success`, not `outcome`, and no manual or suppressed checks: this code
  // cannot read them, so until v9 swaps in, what reads them answers 503 (the rollups still serve).
  // v9's raw rows all carry their team id and v9 has no team documents, so 11's reads take the
  // team index alone for them (`rawScopesOf`): they stay readable while 11 is rebuilt.
  // The time -> key map exists from v15: the readers take a generation without it (v14, while
  // 15 is rebuilt) through that generation's project index.
  readableFrom: { [RAW_CHECKS_COLLECTION]: 9, [CHECK_MINUTES_COLLECTION]: 15 },
  collections: [
    // Read and written by id only (see RollupKey).
    { name: ROLLUPS_COLLECTION, indexes: [], columns: ROLLUP_COLUMNS },
    {
      name: RAW_CHECKS_COLLECTION,
      indexes: [
        // p95 and consecutive failures: newest successful checks of a scope (outcome 1); range
        // edges: a scope's checks of a time range, read as two ranges (outcomes 0 and 1), so no
        // index of their own (issue 12: ~35 B a check). Manual and suppressed checks (2, 3) lie
        // in ranges no analytics read touches. An endpoint's rows are found by this one on a
        // move, and its checks list walks it as one range per outcome, merged.
        // Sparse: no entry for the rows of a team's primary project (`TeamDoc`).
        // No project index (v15): a project's rows are a key range of the time -> key map's, or
        // its endpoints' ranges of the endpoint index (`RawSpans` in queries.ts).
        { fields: ['team_id', 'outcome', 'checked_at_ms', 'check_id'], sparse: true },
        { fields: ['endpoint_id', 'outcome', 'checked_at_ms', 'check_id'] },
      ],
      idField: 'check_id',
      columns: RAW_CHECK_COLUMNS,
    },
    // Members by endpoint id, and each team's primary project (`TeamDoc`). A project's members
    // by its index (v15: `RawSpans` reads a project's rows through its endpoints' ranges of the
    // endpoint index when that is cheaper than a key range); team documents have no project.
    // Typed columns: a project's member count is then read from its index alone (a JSON
    // field's equality also checks each document's type: 2 ms a count at 10,000 members).
    { name: ROLLUP_MEMBERS_COLLECTION, indexes: [{ fields: ['project_id', 'endpoint_id'], sparse: true }], columns: ROLLUP_MEMBER_COLUMNS },
    // Read by key range (minutes) only.
    { name: CHECK_MINUTES_COLLECTION, indexes: [], idField: 'minute', columns: CHECK_MINUTE_COLUMNS },
    {
      name: REGION_CHECKS_COLLECTION,
      // A region's edges, p95 and consecutive failures, as the endpoint's raw rows are read.
      indexes: [{ fields: ['endpoint_id', 'region', 'success', 'checked_at_ms', 'check_id'] }],
      idField: 'check_id',
      columns: REGION_CHECK_COLUMNS,
    },
  ],
  // Nothing else writes its collections (retention summarizes through the log), and the
  // handlers build new documents (`withCheck` copies before adding): the runner keeps them.
  keepsDocuments: true,
  prefetch: readsOfCheck,
  handlers: {
    [CHECK_RECORDED]: onCheckRecorded,
    [CHECKS_SUMMARIZED]: onChecksSummarized,
    [ENDPOINT_REGISTERED]: onEndpointRegistered,
    [ENDPOINT_RECONFIGURED]: onEndpointReconfigured,
  },
});
