import { MongoServerError } from 'mongodb';
import { guardMongo } from '../../src/platform/read-store/mongodb/mongo-errors.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { startTestApp } from '../support/test-app.js';

describe('a MongoDB failover seen through the API', () => {
  const t = startedBeforeAll(() => startTestApp(), (app) => app.close());

  it('answers 503 unavailable with Retry-After while the replica set has no writable primary', async () => {
    const team = await t.createTeam();
    const { token } = await t.issueToken(team.id, ['monitoring:read'], 'viewer');
    const views = t.platform.views;
    const find = views.find.bind(views);
    // The read store's adapter code path, with the error the driver raises during an election.
    views.find = (collection, query) =>
      guardMongo('find', () => Promise.reject(new MongoServerError({ ok: 0, code: 10107, codeName: 'NotWritablePrimary', errmsg: 'not primary' } as never)));
    try {
      const response = await t.request('GET', '/api/public/v2/projects', { token });
      expect(response.statusCode).toBe(503);
      expect(response.headers['retry-after']).toBe('5');
      expect(response.json()).toMatchObject({ status: 503, code: 'unavailable' });
    } finally {
      views.find = find;
    }
    expect((await t.request('GET', '/api/public/v2/projects', { token })).statusCode).toBe(200);
  });
});
