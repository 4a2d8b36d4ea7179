import type { Doc, Filter, ReadStore, Scalar } from '../../../platform/read-store/read-store.port.js';
import type { Slices } from '../../application/slices.js';
import { checkMinuteOf, teamDocId, type CheckMinuteRow, type RollupScopeKind, type TeamDoc } from './view.js';

/**
 * Where a scope's raw rows (`analytics_checks`) of a time span lie, as filters that each read
 * one range: of an index, or of the table's keys (rollups v15, issue 31).
 *
 * An endpoint's rows are its range of the endpoint index. A project has no index of its own
 * (about 19 B a check less): its rows of a span are read either as the span's key range (the
 * time -> key map, `CHECK_MINUTES_COLLECTION`: SQLite walks the raw table from the span's least
 * to its greatest check id and keeps the project's rows), which costs every check of the
 * service in that range, or as its endpoints' ranges of the endpoint index (an `in` list:
 * SQLite seeks once per endpoint), which costs a seek per endpoint. Each span takes the cheaper:
 * a series' sub-minute edges of a project of 10,000 endpoints are a few hundred keys each
 * (10,000 seeks each the other way: about 15 ms), a small project's p95 over days of a busy
 * service is a few seeks. A team's rows are its primary project's (`TeamDoc`: they leave
 * `team_id` null) and the rest under the sparse team index.
 *
 * A generation without the map (v14, serving while v15 is rebuilt) still has the project index:
 * its project rows are read through it (`{ project_id }`).
 */

/** One range of a scope's raw rows: the filter, and whether its rows come in key order (a key range) or in the index's time order. */
export interface RawPart {
  filter: Filter;
  byKey: boolean;
}

/** Half-open, epoch milliseconds. */
export interface RawSpan {
  from: number;
  to: number;
}

export interface RawSpanNames {
  checks: string;
  members: string;
  /** Missing: the generation has no time -> key map (v14): its project index is read. */
  checkMinutes?: string;
}

/**
 * Keys of the raw table one seek of the endpoint index is worth (measured on SQLite: a seek
 * about 1.5 us, a key walked about 0.065 us).
 */
export const KEYS_PER_SEEK = 24;
/** Below this many keys a span is walked without asking how many endpoints the project has. */
const SEEKS_BEFORE_MEMBERS = 16;
/** Each `in` list stays short (SQLite's bound-parameter limit). */
const IN_CHUNK = 250;
/** Minutes of the map per read of single minutes. */
const MINUTES_PER_READ = 250;

export interface RawSpansOptions {
  /** Keys one seek is worth (tests set 0 to take the endpoint index, Infinity the key range). */
  keysPerSeek?: number;
}

/** Member documents per read of a project's members. */
const MEMBERS_PAGE = 2_500;

/** One request's view of where raw rows lie: each project's members are asked for once. */
export class RawSpans {
  private readonly members = new Map<number, Promise<number[]>>();
  private readonly teams = new Map<number, Promise<TeamDoc | null>>();

  constructor(
    private readonly store: ReadStore,
    private readonly slices: Slices,
    private readonly names: RawSpanNames,
    private readonly options: RawSpansOptions = {},
  ) {}

  /** The parts of the scope's rows checked in each span, span by span (the caller adds outcome and time). */
  async partsOf(kind: RollupScopeKind, id: number, spans: RawSpan[]): Promise<RawPart[][]> {
    if (kind === 'endpoint') return spans.map(() => [{ filter: { endpoint_id: id }, byKey: false }]);
    if (kind === 'project') return this.projectParts(id, spans);
    const team = await this.teamOf(id);
    const own: RawPart = { filter: { team_id: id }, byKey: false };
    if (!team) return spans.map(() => [own]);
    return (await this.projectParts(team.primary_project_id, spans)).map((parts) => [...parts, own]);
  }

  private async projectParts(projectId: number, spans: RawSpan[]): Promise<RawPart[][]> {
    if (this.names.checkMinutes === undefined) return spans.map(() => [{ filter: { project_id: projectId }, byKey: false }]);
    const keys = await this.keyRanges(this.names.checkMinutes, spans);
    const keysPerSeek = this.options.keysPerSeek ?? KEYS_PER_SEEK;
    return Promise.all(
      keys.map(async (range): Promise<RawPart[]> => {
        if (!range) return [];
        const walked = range.last - range.first + 1;
        if (walked > keysPerSeek * SEEKS_BEFORE_MEMBERS) {
          const endpoints = await this.membersOf(projectId);
          // The project label too: a row counts where the rollups view put it.
          if (endpoints.length * keysPerSeek < walked) return chunk(endpoints, IN_CHUNK).map((ids) => ({ filter: { endpoint_id: ids.length === 1 ? ids[0] : { in: ids }, project_id: projectId }, byKey: false }));
        }
        return [{ filter: { project_id: projectId, check_id: { gte: range.first, lte: range.last } }, byKey: true }];
      }),
    );
  }

  /** The least and greatest check id of the rows checked in each span (null: none). */
  private async keyRanges(minutes: string, spans: RawSpan[]): Promise<Array<{ first: number; last: number } | null>> {
    const bounds = spans.map((span) => ({ first: checkMinuteOf(span.from), last: checkMinuteOf(span.to - 1) }));
    const single = [...new Set(bounds.filter((b) => b.first === b.last).map((b) => b.first))];
    const rows = new Map<number, CheckMinuteRow>();
    await this.slices.map(chunk(single, MINUTES_PER_READ), async (group) => {
      const found = (await this.store.find(minutes, { filter: { minute: group.length === 1 ? group[0] : { in: group } } })) as unknown as CheckMinuteRow[];
      for (const row of found) rows.set(row.minute, row);
    });
    return Promise.all(
      bounds.map(async ({ first, last }, i) => {
        if (spans[i].from >= spans[i].to) return null;
        if (first === last) {
          const row = rows.get(first);
          return row ? { first: row.first_check_id, last: row.last_check_id } : null;
        }
        const [sums] = await this.slices.run(() =>
          this.store.aggregate(minutes, { filter: { minute: { gte: first, lte: last } }, min: ['first_check_id'], max: ['last_check_id'] }),
        );
        if (!sums || sums.count === 0) return null;
        return { first: sums.min.first_check_id as number, last: sums.max.last_check_id as number };
      }),
    );
  }

  /**
   * The endpoints whose rows are labelled with the project: this view's own member documents
   * (`ROLLUP_MEMBERS_COLLECTION`, by their project index), written in the same transactions as
   * the rows' labels, so the two never disagree; deleted endpoints' stay.
   */
  private membersOf(projectId: number): Promise<number[]> {
    let members = this.members.get(projectId);
    if (!members) this.members.set(projectId, (members = this.readMembers(projectId)));
    return members;
  }

  private async readMembers(projectId: number): Promise<number[]> {
    const ids: number[] = [];
    let after: Scalar[] | undefined;
    for (;;) {
      const page = await this.slices.run(() =>
        this.store.find(this.names.members, { filter: { project_id: projectId }, sort: [['endpoint_id', 'asc']], after, limit: MEMBERS_PAGE, fields: ['endpoint_id'] }),
      );
      for (const doc of page) ids.push(doc.endpoint_id as number);
      if (page.length < MEMBERS_PAGE) return ids;
      after = [ids[ids.length - 1]];
    }
  }

  private teamOf(teamId: number): Promise<TeamDoc | null> {
    let team = this.teams.get(teamId);
    if (!team) this.teams.set(teamId, (team = this.slices.run(() => this.store.get(this.names.members, teamDocId(teamId))) as Promise<TeamDoc | null>));
    return team;
  }

  /**
   * Every row of `part` matching `filter` too, paged so that no adapter page limit can cut the
   * result and each page is one range read in its own order (a key range by key, an index range
   * by time: ordered otherwise, SQLite may walk the whole table instead).
   */
  async readAll(part: RawPart, filter: Filter, fields: string[], pageSize: number): Promise<Doc[]> {
    const sort: Array<[string, 'asc']> = part.byKey ? [['check_id', 'asc']] : [['checked_at_ms', 'asc'], ['check_id', 'asc']];
    const wanted = [...new Set([...fields, ...sort.map(([field]) => field)])];
    const rows: Doc[] = [];
    let after: Scalar[] | undefined;
    for (;;) {
      const page = await this.slices.run(() => this.store.find(this.names.checks, { filter: { ...part.filter, ...filter }, sort, after, limit: pageSize, fields: wanted }));
      rows.push(...page);
      if (page.length < pageSize) return rows;
      const last = page[page.length - 1];
      after = sort.map(([field]) => last[field] as Scalar);
    }
  }
}

/** `items` in consecutive pieces of at most `size`. */
export function chunk<T>(items: T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}
