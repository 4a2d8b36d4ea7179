/**
 * Verification of one stream's chain (pure): its stored events in revision order, and what
 * retention says it removed. The first event that does not verify is reported; the rest of the
 * stream is not judged (every later link depends on it). Every hash is recomputed from the
 * events and compared with what each stores: a whole hash whole, a 16-hex prefix as a prefix;
 * the next event links to the recomputed full hash.
 *
 * The judgement pauses after each slice of events (a generator, so this stays free of timers): its
 * caller lets the event loop turn between two slices, since one stream can hold a hundred
 * thousand events (an incident of months, a busy endpoint's checks) and hashing them is about
 * 100 ms of one task.
 */
import { chainHash, GENESIS_HASH, isWholeHash, matchesStored, type ChainedFields } from '../../platform/event-store/chain.js';

export interface StoredEvent extends ChainedFields {
  /** metadata.hash (whole, or its 16-hex prefix); undefined for events appended before chaining. */
  hash?: string;
  /** metadata.prev_hash, stored only on anchors and restarts. */
  prev_hash?: string;
}

/** Revisions retention removed from the stream, and the hash of the last of them when known. */
export interface PrunedRange {
  from_revision: number;
  through_revision: number;
  through_hash?: string | null;
}

export type ChainProblem = 'missing' | 'altered' | 'reordered';

export interface BrokenStream {
  stream: string;
  /** The first revision that does not verify. */
  revision: number;
  problem: ChainProblem;
  /** What the chain says should be there, and what is. */
  expected: string;
  found: string;
}

export interface StreamVerification {
  stream: string;
  events_checked: number;
  broken: BrokenStream | null;
}

/** How far around a failing event a moved event is looked for. */
const REORDER_WINDOW = 8;

/** How many events are judged between two pauses of `verifyStreamInSlices` (about a millisecond of hashing). */
export const VERIFY_SLICE = 1000;

/** Judges the stream, yielding the count of events judged after each `slice` of them; returns the verification. */
export function* verifyStreamInSlices(stream: string, events: StoredEvent[], pruned: PrunedRange[] = [], slice = VERIFY_SLICE): Generator<number, StreamVerification> {
  const ok = (checked: number): StreamVerification => ({ stream, events_checked: checked, broken: null });
  const fail = (checked: number, revision: number, problem: ChainProblem, expected: string, found: string): StreamVerification => ({
    stream,
    events_checked: checked,
    broken: { stream, revision, problem, expected, found },
  });
  const covered = (from: number, through: number) => coveredBy(pruned, from, through);
  /** The hash the next revision links to; null when it cannot be known (a removed event's). */
  let prev: string | null = GENESIS_HASH;
  let next = 0;
  let chained = false;
  /** The chain of the events before chaining began, as the anchor was computed. */
  let before = GENESIS_HASH;
  let beforeHadGap = false;
  /** The full hashes of the events verified so far (the reorder search links to them). */
  const fulls = new Map<number, string>();
  for (const [i, event] of events.entries()) {
    if (i > 0 && i % slice === 0) yield i;
    const r = event.revision;
    if (r < next) return fail(i, r, 'reordered', `revision ${next}`, `revision ${r} again`);
    if (r > next) {
      if (!covered(next, r - 1)) return fail(i, next, 'missing', `revision ${next}`, `revision ${r}`);
      // Removed by retention: the link is the summary's hash of the last removed event, when it has one.
      prev = pruned.find((p) => p.through_revision === r - 1)?.through_hash ?? null;
      if (!chained) beforeHadGap = true;
    }
    next = r + 1;
    if (event.hash === undefined) {
      if (chained) return fail(i, r, 'altered', 'a hash', 'none');
      before = chainHash(before, event);
      continue;
    }
    if (!chained) {
      chained = true;
      if (event.prev_hash !== undefined) {
        // The anchor: the chain of the events before it, as far as they are all still there.
        if (i > 0 && !beforeHadGap && event.prev_hash !== before) return fail(i, events[0].revision, 'altered', event.prev_hash, before);
        prev = event.prev_hash;
      } else if (i > 0) {
        return fail(i, r, 'altered', 'prev_hash (the anchor of the events before it)', 'none');
      }
    } else if (event.prev_hash !== undefined) {
      // A restart after every earlier event left the log: only valid across a gap retention made.
      if (prev !== null && event.prev_hash !== prev) return fail(i, r, 'altered', prev, event.prev_hash);
      prev = event.prev_hash;
    }
    if (prev === null) {
      // Nothing to link to: this event starts the chain that follows; only a whole hash can
      // (retention cuts a chained stream just before an anchor).
      if (!isWholeHash(event.hash)) return fail(i, r, 'altered', 'a whole hash after removed events', event.hash);
      prev = event.hash;
      fulls.set(i, prev);
      continue;
    }
    const computed = chainHash(prev, event);
    if (!matchesStored(computed, event.hash)) return fail(i, r, movedFrom(events, i, prev, fulls) ? 'reordered' : 'altered', computed, event.hash);
    prev = computed;
    fulls.set(i, prev);
  }
  return ok(events.length);
}

/**
 * Whether events[i] verifies at another place near it: its content is intact but was moved. It
 * may link to any full hash near it: those verified before it, the whole hashes stored near it,
 * and the full hash of a near event that stores a prefix, found by linking it in turn.
 */
function movedFrom(events: StoredEvent[], i: number, prev: string, fulls: Map<number, string>): boolean {
  const event = events[i];
  const own = event.hash;
  if (own === undefined) return false;
  const start = Math.max(0, i - REORDER_WINDOW);
  const near = events.slice(start, i + REORDER_WINDOW + 1);
  const revisions = [...new Set(near.map((e) => e.revision).concat(near.map((e) => e.revision + 1)))];
  const links = new Set([prev, GENESIS_HASH]);
  near.forEach((e, k) => {
    const full = fulls.get(start + k);
    if (full !== undefined) links.add(full);
    else if (e !== event && e.hash !== undefined && isWholeHash(e.hash)) links.add(e.hash);
  });
  // Two rounds find the full hashes of two moved events that store prefixes (a swapped pair).
  for (let round = 0; round < 2; round++) {
    for (const other of near) {
      const stored = other.hash;
      if (other === event || stored === undefined || isWholeHash(stored)) continue;
      for (const link of [...links]) {
        for (const revision of revisions) {
          const full = chainHash(link, { ...other, revision });
          if (matchesStored(full, stored)) links.add(full);
        }
      }
    }
  }
  for (const link of links) {
    for (const revision of revisions) {
      if (revision !== event.revision && matchesStored(chainHash(link, { ...event, revision }), own)) return true;
    }
  }
  return false;
}

function coveredBy(pruned: PrunedRange[], from: number, through: number): boolean {
  let need = from;
  for (const range of [...pruned].sort((a, b) => a.from_revision - b.from_revision)) {
    if (range.from_revision > need) break;
    need = Math.max(need, range.through_revision + 1);
    if (need > through) return true;
  }
  return need > through;
}
