/**
 * Slug claims (`status-page-slug-<slug>`): a slug belongs to at most one page. Claiming appends
 * to the slug's stream with the expected revision, so concurrent claims of one slug by two
 * processes cannot both succeed.
 *
 * Claim and page are two streams, so a process may stop between them. A claim is therefore
 * taken over when its page does not hold the slug: the page was deleted, or it does not exist /
 * holds another slug and the claim is at least `STALE_CLAIM_MS` old (a create or rename that
 * died before writing the page). A fresh claim is respected: its request may still be running.
 */
import type { RecordedEvent } from '../../platform/event-store/event-store.port.js';
import { STATUS_PAGE_SLUG_CLAIMED, STATUS_PAGE_SLUG_RELEASED, type SlugClaimedData, type SlugReleasedData } from './events.js';

export const STALE_CLAIM_MS = 60_000;

export interface SlugState {
  /** The page holding the claim, null when free. */
  page_id: number | null;
  claimed_at: string | null;
}

/** What the application knows about the page holding the claim. */
export interface ClaimHolder {
  /** The page's current slug; null when the page does not exist. */
  slug: string | null;
  deleted: boolean;
}

export function initialSlugState(): SlugState {
  return { page_id: null, claimed_at: null };
}

export function evolveSlug(state: SlugState, event: Pick<RecordedEvent, 'type' | 'data'>): SlugState {
  switch (event.type) {
    case STATUS_PAGE_SLUG_CLAIMED: {
      const data = event.data as SlugClaimedData;
      return { page_id: data.page_id, claimed_at: data.claimed_at };
    }
    case STATUS_PAGE_SLUG_RELEASED:
      return (event.data as SlugReleasedData).page_id === state.page_id ? initialSlugState() : state;
    default:
      return state;
  }
}

export const slugAggregate = { initial: initialSlugState, evolve: evolveSlug };

/** Whether the claim no longer protects a page (see the module comment). */
export function claimAbandoned(slug: string, state: SlugState, holder: ClaimHolder, now: number): boolean {
  if (state.page_id === null) return true;
  if (holder.deleted) return true;
  if (holder.slug === slug) return false;
  return state.claimed_at !== null && now - Date.parse(state.claimed_at) >= STALE_CLAIM_MS;
}

export type ClaimDecision =
  | { ok: true; events: Array<{ type: string; data: SlugClaimedData }> }
  | { ok: false; reason: 'taken' };

export function decideClaim(slug: string, state: SlugState, pageId: number, holder: ClaimHolder | null, now: number): ClaimDecision {
  if (state.page_id === pageId) return { ok: true, events: [] };
  if (state.page_id !== null && !claimAbandoned(slug, state, holder ?? { slug: null, deleted: false }, now)) return { ok: false, reason: 'taken' };
  return { ok: true, events: [{ type: STATUS_PAGE_SLUG_CLAIMED, data: { slug, page_id: pageId, claimed_at: new Date(now).toISOString() } }] };
}

/** Releasing a slug another page has taken over since changes nothing. */
export function decideRelease(slug: string, state: SlugState, pageId: number, now: number): Array<{ type: string; data: SlugReleasedData }> {
  if (state.page_id !== pageId) return [];
  return [{ type: STATUS_PAGE_SLUG_RELEASED, data: { slug, page_id: pageId, released_at: new Date(now).toISOString() } }];
}
