import { matchBody } from '../../../src/probing/domain/body-match.js';

describe('matchBody', () => {
  describe('none', () => {
    it('accepts any body, even invalid JSON', () => {
      expect(matchBody('none', 'whatever', '{broken')).toEqual({ ok: true });
    });
  });

  describe('exact', () => {
    it('accepts an identical body', () => {
      expect(matchBody('exact', 'OK\n', 'OK\n')).toEqual({ ok: true });
    });

    it('refuses a body that differs only in whitespace or case', () => {
      expect(matchBody('exact', 'OK', 'OK\n').ok).toBe(false);
      expect(matchBody('exact', 'OK', 'ok').ok).toBe(false);
    });

    it('treats a missing expected body as the empty body', () => {
      expect(matchBody('exact', null, '')).toEqual({ ok: true });
      expect(matchBody('exact', null, 'x').ok).toBe(false);
    });
  });

  describe('contains', () => {
    it('accepts a body containing the expected text', () => {
      expect(matchBody('contains', 'healthy', '{"status":"healthy"}')).toEqual({ ok: true });
    });

    it('refuses a body without the expected text', () => {
      const result = matchBody('contains', 'healthy', '{"status":"degraded"}');
      expect(result).toEqual({ ok: false, reason: 'does not contain the expected text' });
    });
  });

  describe('json_subset', () => {
    const actual = JSON.stringify({
      status: 'up',
      version: 3,
      checks: { db: { ok: true, ms: 4 }, cache: { ok: true } },
      regions: ['eu', 'us', 'ap'],
      nodes: [{ id: 1, up: true }, { id: 2, up: false }],
      note: null,
    });

    it('accepts nested objects whose expected keys all match, ignoring extra keys', () => {
      expect(matchBody('json_subset', '{"status":"up","checks":{"db":{"ok":true}}}', actual)).toEqual({ ok: true });
    });

    it('accepts an empty object against any object', () => {
      expect(matchBody('json_subset', '{}', actual)).toEqual({ ok: true });
    });

    it('refuses a differing nested value', () => {
      const result = matchBody('json_subset', '{"checks":{"db":{"ok":false}}}', actual);
      expect(result).toEqual({ ok: false, reason: 'response JSON does not contain the expected subset' });
    });

    it('refuses a missing key, even when the expected value is null', () => {
      expect(matchBody('json_subset', '{"missing":null}', actual).ok).toBe(false);
      expect(matchBody('json_subset', '{"note":null}', actual)).toEqual({ ok: true });
    });

    it('compares scalars strictly, without coercion', () => {
      expect(matchBody('json_subset', '{"version":"3"}', actual).ok).toBe(false);
      expect(matchBody('json_subset', '{"version":3}', actual)).toEqual({ ok: true });
    });

    it('matches array elements in any order', () => {
      expect(matchBody('json_subset', '{"regions":["ap","eu"]}', actual)).toEqual({ ok: true });
    });

    it('refuses an array when an expected element is absent', () => {
      expect(matchBody('json_subset', '{"regions":["eu","sa"]}', actual).ok).toBe(false);
    });

    it('matches array elements that are objects by subset', () => {
      expect(matchBody('json_subset', '{"nodes":[{"id":2,"up":false}]}', actual)).toEqual({ ok: true });
      expect(matchBody('json_subset', '{"nodes":[{"id":2,"up":true}]}', actual).ok).toBe(false);
    });

    it('refuses a type mismatch between object and array', () => {
      expect(matchBody('json_subset', '{"checks":[]}', actual).ok).toBe(false);
      expect(matchBody('json_subset', '{"regions":{}}', actual).ok).toBe(false);
    });

    it('matches top-level arrays and scalars', () => {
      expect(matchBody('json_subset', '[1]', '[3,2,1]')).toEqual({ ok: true });
      expect(matchBody('json_subset', 'true', 'true')).toEqual({ ok: true });
      expect(matchBody('json_subset', '"a"', '"b"').ok).toBe(false);
    });

    it('fails with a clear reason when the response is not JSON', () => {
      expect(matchBody('json_subset', '{}', '<html>oops</html>')).toEqual({
        ok: false,
        reason: 'response is not valid JSON',
      });
    });

    it('fails when the expected body is missing or not JSON', () => {
      expect(matchBody('json_subset', null, '{}')).toEqual({ ok: false, reason: 'no expected JSON configured' });
      expect(matchBody('json_subset', '{nope', '{}')).toEqual({ ok: false, reason: 'expected body is not valid JSON' });
    });

    it('never quotes the expected or actual body in its reason', () => {
      const result = matchBody('json_subset', '{"secret":"s3cr3t"}', '{"secret":"other-value"}');
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.reason).not.toMatch(/s3cr3t|other-value|secret/);
      }
    });
  });
});
