/**
 * CI runs the suite on a loaded 2-core machine, where a view can take longer than the service's
 * default read-your-writes bound (5 s) to apply a write; the service then rightly answers 202
 * `views_behind`, which the fixtures (createTeam, importChecks, ...) refuse. Services started by
 * tests wait longer instead, so a fixture's write gets its 201 as soon as the views show it.
 * Tests of `views_behind` itself set their own short bound.
 */
export const LOADED_MACHINE_ENV: Readonly<Record<string, string>> = { READ_YOUR_WRITES_TIMEOUT_MS: '20000' };
