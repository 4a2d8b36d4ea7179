import { Inject, Injectable } from '@nestjs/common';
import { CursorCodec, type Pagination } from '../../../platform/http/pagination.js';
import { StatusPagesNotFoundError } from '../../domain/errors.js';
import { PLATFORM, type Platform } from '../../../platform/platform.js';
import type { SortDirection } from '../../../platform/read-store/read-store.port.js';
import { STATUS_PAGES_COLLECTION, STATUS_PAGES_PROJECTION, type StatusPageDoc } from './view.js';

const SORT: Array<[string, SortDirection]> = [['page_id', 'asc']];

/** The application API's status page: the stored fields plus the public URL. */
export function presentStatusPage(doc: StatusPageDoc, baseUrl: string) {
  return {
    id: doc.page_id,
    team_id: doc.team_id,
    slug: doc.slug,
    title: doc.title,
    description: doc.description,
    components: doc.components.map((c) => ({ endpoint_id: c.endpoint_id, name: c.name })),
    history_days: doc.history_days,
    publish_automatic_incidents: doc.publish_automatic_incidents === true,
    url: statusPageUrl(baseUrl, doc.slug),
    created_at: doc.created_at,
    updated_at: doc.updated_at,
  };
}

export function statusPageUrl(baseUrl: string, slug: string): string {
  return `${baseUrl}/status/${slug}`;
}

/** Reads of the application API (admin token). */
@Injectable()
export class StatusPageReads {
  private readonly cursors: CursorCodec;

  constructor(@Inject(PLATFORM) private readonly platform: Platform) {
    this.cursors = new CursorCodec(platform.cursorKey);
  }

  async one(teamId: number, pageId: number) {
    const doc = (await this.platform.reader.get(STATUS_PAGES_PROJECTION, STATUS_PAGES_COLLECTION, pageId)) as unknown as StatusPageDoc | null;
    if (!doc || doc.team_id !== teamId) throw new StatusPagesNotFoundError('The status page');
    return presentStatusPage(doc, this.platform.config.publicBaseUrl);
  }

  async list(teamId: number, limit: number, cursor: string | undefined): Promise<{ data: Array<ReturnType<typeof presentStatusPage>>; pagination: Pagination }> {
    const bound = { list: 'status_pages', team_id: teamId };
    const after = this.cursors.decode(cursor, bound);
    const rows = await this.platform.reader.find(STATUS_PAGES_PROJECTION, STATUS_PAGES_COLLECTION, { filter: { team_id: teamId }, sort: SORT, after, limit: limit + 1 });
    const page = this.cursors.page(rows, limit, SORT, bound);
    return { data: page.rows.map((row) => presentStatusPage(row as unknown as StatusPageDoc, this.platform.config.publicBaseUrl)), pagination: page.pagination };
  }
}
