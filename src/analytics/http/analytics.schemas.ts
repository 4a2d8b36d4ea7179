/** OpenAPI schemas of the analytics objects (spec: Analytics objects). */
type Schema = Record<string, unknown>;

const int: Schema = { type: 'integer' };
const nullableNumber: Schema = { type: 'number', nullable: true };
const timestamp: Schema = { type: 'string', format: 'date-time' };

const obj = (properties: Record<string, Schema>): Schema => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
});

export const windowSchema = obj({ from: timestamp, to: timestamp, bucket_seconds: int });
export const healthSchema = obj({ enabled_endpoints: int, healthy_endpoints: int, failing_endpoints: int, unchecked_endpoints: int });
export const totalsSchema = obj({
  checks: int,
  failures: int,
  uptime_percent: nullableNumber,
  avg_latency_ms: nullableNumber,
  min_latency_ms: nullableNumber,
  max_latency_ms: nullableNumber,
  p95_latency_ms: nullableNumber,
});
export const incidentsSchema = obj({ total: int, open: int });
export const seriesSchema: Schema = {
  type: 'array',
  items: obj({ bucket_start: timestamp, checks: int, failures: int, uptime_percent: nullableNumber, avg_latency_ms: nullableNumber }),
};

export const teamAnalyticsSchema = obj({
  team_id: int,
  window: windowSchema,
  health: healthSchema,
  totals: totalsSchema,
  incidents: incidentsSchema,
  series: seriesSchema,
  projects: {
    type: 'array',
    items: obj({
      project_id: int,
      name: { type: 'string' },
      enabled_endpoints: int,
      checks: int,
      failures: int,
      uptime_percent: nullableNumber,
      avg_latency_ms: nullableNumber,
      open_incidents: int,
    }),
  },
});

export const projectAnalyticsSchema = obj({
  team_id: int,
  project_id: int,
  window: windowSchema,
  health: healthSchema,
  totals: totalsSchema,
  incidents: incidentsSchema,
  series: seriesSchema,
  endpoints: {
    type: 'array',
    items: obj({
      endpoint_id: int,
      name: { type: 'string' },
      enabled: { type: 'boolean' },
      checks: int,
      failures: int,
      uptime_percent: nullableNumber,
      avg_latency_ms: nullableNumber,
      up: { type: 'boolean', nullable: true },
      last_check_at: { ...timestamp, nullable: true },
    }),
  },
});

export const endpointAnalyticsSchema = obj({
  team_id: int,
  project_id: int,
  endpoint_id: int,
  window: windowSchema,
  totals: totalsSchema,
  incidents: incidentsSchema,
  series: seriesSchema,
  current: obj({
    up: { type: 'boolean', nullable: true },
    last_check_at: { ...timestamp, nullable: true },
    last_status_code: { type: 'integer', nullable: true },
    last_latency_ms: { type: 'integer', nullable: true },
    consecutive_failures: int,
  }),
});

export const wrapped = (schema: Schema): Schema => obj({ data: schema });
