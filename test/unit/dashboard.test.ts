import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { SeriesType } from '../support/series';
import { nodeDefaultSeries, PROJECT_SERIES, SHARED_GAUGES, storedNames } from '../support/series';

/**
 * Static checks of the Grafana dashboard deploy/grafana/dashboards/ixapi-operations.json: it loads,
 * every query goes to the datasource deploy/grafana/provisioning provisions and names only series
 * the processes serve, and every panel is placed, titled and explained. Grafana is not needed.
 */

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

const DASHBOARD_FILE = 'deploy/grafana/dashboards/ixapi-operations.json';
const DATASOURCES_FILE = 'deploy/grafana/provisioning/datasources/prometheus.yml';

/** Series of the worker's Temporal SDK the dashboard reads, with their types. */
const TEMPORAL_SERIES: Record<string, SeriesType> = {
  temporal_activity_schedule_to_start_latency_seconds: 'histogram',
  temporal_workflow_task_schedule_to_start_latency_seconds: 'histogram',
  temporal_activity_execution_failed_total: 'counter',
  temporal_sticky_cache_size: 'gauge',
  temporal_worker_task_slots_available: 'gauge',
};

/**
 * Every series a query may name, as Prometheus stores it: the API's and the worker's own and Node's
 * defaults (docs/deployment.md, "Metrics"), those of the worker's Temporal SDK, and Prometheus's `up`.
 */
const KNOWN_SERIES = new Set([
  ...Object.entries({ ...nodeDefaultSeries(), ...PROJECT_SERIES, ...TEMPORAL_SERIES }).flatMap(
    ([name, type]) => storedNames(name, type),
  ),
  'up',
]);

/** PromQL functions and aggregations, and Grafana's label_values() of variable queries. */
const FUNCTIONS = new Set([
  ...['sum', 'min', 'max', 'avg', 'group', 'count', 'count_values', 'topk', 'bottomk', 'quantile'],
  ...['abs', 'absent', 'ceil', 'floor', 'round', 'clamp', 'clamp_min', 'clamp_max', 'sqrt', 'exp', 'ln'],
  ...['rate', 'irate', 'increase', 'delta', 'idelta', 'deriv', 'changes', 'resets', 'predict_linear'],
  ...['histogram_quantile', 'label_replace', 'label_join', 'scalar', 'vector', 'time', 'timestamp'],
  ...['avg_over_time', 'min_over_time', 'max_over_time', 'sum_over_time', 'count_over_time'],
  ...['last_over_time', 'absent_over_time', 'sort', 'sort_desc', 'label_values'],
]);
/** PromQL keywords that may stand between expressions. */
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);
/** Grafana's own variables. */
const BUILT_IN_VARIABLES = new Set(['__rate_interval', '__interval', '__range', '__interval_ms']);
/** Units Grafana knows, of those this dashboard may use. */
const UNITS = new Set(['s', 'ms', 'reqps', 'ops', 'percentunit', 'short', 'bytes', 'none']);

interface Target {
  refId?: string;
  expr?: string;
  datasource?: { type?: string; uid?: string };
}

interface Panel {
  id?: number;
  type?: string;
  title?: string;
  description?: string;
  gridPos?: { x: number; y: number; w: number; h: number };
  datasource?: { type?: string; uid?: string };
  fieldConfig?: { defaults?: { unit?: string } };
  targets?: Target[];
  panels?: Panel[];
}

interface Variable {
  name: string;
  type: string;
  datasource?: { type?: string; uid?: string };
  definition?: string;
  query?: string | { query?: string };
}

interface Dashboard {
  uid?: string;
  title?: string;
  schemaVersion?: number;
  refresh?: string;
  time?: { from: string; to: string };
  panels?: Panel[];
  templating?: { list?: Variable[] };
}

type Grid = NonNullable<Panel['gridPos']>;

/** The names a PromQL expression (or a Grafana variable query) uses, by kind. */
function namesIn(expr: string): { series: string[]; functions: string[]; variables: string[] } {
  const variables = [...expr.matchAll(/\$(?:\{(\w+)[^}]*\}|(\w+))/g)].map(
    ([, braced, bare]) => braced ?? bare,
  );
  const bare = expr
    // Label values, durations and label matchers name no series.
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '[]')
    // Nor do the label lists of by, without, on, ignoring, group_left and group_right, nor the label
    // argument of a variable's label_values(series, label).
    .replace(/\blabel_values\(([^,()]*),\s*\w+\s*\)/g, 'label_values($1)')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$(?:\{[^}]*\}|\w+)/g, ' ');
  const series: string[] = [];
  const functions: string[] = [];
  for (const match of bare.matchAll(/(?<![\w.])[A-Za-z_:][\w:]*/g)) {
    const name = match[0];
    const after = bare.slice((match.index ?? 0) + name.length).trimStart();
    if (KEYWORDS.has(name.toLowerCase())) continue;
    if (after.startsWith('(')) functions.push(name);
    else series.push(name);
  }
  return { series, functions, variables };
}

/** Whether two grid rectangles share any cell. */
function overlap(a: Grid, b: Grid): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/** Whether each place `name` appears in `expr` is the direct argument of a max aggregation. */
function takenByMax(expr: string, name: string): boolean {
  const places = [...expr.matchAll(new RegExp(`(?<![\\w:])${name}(?![\\w:])`, 'g'))];
  return (
    places.length > 0 &&
    places.every((place) =>
      /\bmax\s*(?:(?:by|without)\s*\([^)]*\)\s*)?\(\s*$/.test(expr.slice(0, place.index)),
    )
  );
}

const dashboardText = (): string => read(DASHBOARD_FILE);
const dashboard = (): Dashboard => JSON.parse(dashboardText()) as Dashboard;

/** Every panel, those inside collapsed rows included. */
function allPanels(board: Dashboard): Panel[] {
  return (board.panels ?? []).flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

/** The panels that query (all but rows). */
const queryPanels = (board: Dashboard): Panel[] => allPanels(board).filter((panel) => panel.type !== 'row');

const label = (panel: Panel): string => `panel ${panel.id} "${panel.title}"`;

/** Every query: of each panel, and of each query variable. */
function queries(board: Dashboard): { where: string; expr: string }[] {
  const ofPanels = queryPanels(board).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      where: `${label(panel)} ${target.refId}`,
      expr: target.expr ?? '',
    })),
  );
  const ofVariables = (board.templating?.list ?? [])
    .filter((variable) => variable.type === 'query')
    .map((variable) => ({
      where: `variable $${variable.name}`,
      expr: typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? ''),
    }));
  return [...ofPanels, ...ofVariables];
}

/** The uid of the datasource deploy/grafana/provisioning provisions. */
function provisionedUid(): string {
  const file = parse(read(DATASOURCES_FILE)) as { datasources?: { uid?: string; type?: string }[] };
  const prometheus = (file.datasources ?? []).filter((source) => source.type === 'prometheus');
  assert.equal(prometheus.length, 1, `${DATASOURCES_FILE} provisions one Prometheus datasource`);
  assert.ok(prometheus[0].uid, 'the datasource has a fixed uid');
  return prometheus[0].uid;
}

describe('dashboard: the helpers of these checks', () => {
  it('finds the series, functions and variables of an expression', () => {
    const names = namesIn(
      'histogram_quantile(0.9, sum by (le, type) (rate(ixapi_x_bucket{type=~"$type", a="b c"}[$__rate_interval]))) / on (type) group_left ixapi_y or vector(0)',
    );
    assert.deepEqual(names.series, ['ixapi_x_bucket', 'ixapi_y']);
    assert.deepEqual(names.functions, ['histogram_quantile', 'sum', 'rate', 'vector']);
    assert.deepEqual(names.variables, ['type', '__rate_interval']);
    assert.deepEqual(namesIn('label_values(ixapi_z_count, operation)').series, ['ixapi_z_count']);
  });

  it('tells overlapping grid positions from adjacent ones', () => {
    assert.equal(overlap({ x: 0, y: 0, w: 12, h: 8 }, { x: 11, y: 7, w: 4, h: 4 }), true);
    assert.equal(overlap({ x: 0, y: 0, w: 12, h: 8 }, { x: 12, y: 0, w: 12, h: 8 }), false);
    assert.equal(overlap({ x: 0, y: 0, w: 12, h: 8 }, { x: 0, y: 8, w: 24, h: 1 }), false);
  });

  it('tells a gauge taken by max from one added up', () => {
    assert.equal(takenByMax('max by (type) (ixapi_resources{state="error"})', 'ixapi_resources'), true);
    assert.equal(takenByMax('sum(ixapi_resources)', 'ixapi_resources'), false);
    assert.equal(takenByMax('max(ixapi_resources) + sum(ixapi_resources)', 'ixapi_resources'), false);
  });
});

describe('dashboard: deploy/grafana/dashboards/ixapi-operations.json', () => {
  it('is a JSON dashboard with a fixed uid, refreshing every 30 s over the last 6 hours', () => {
    let board: Dashboard | undefined;
    assert.doesNotThrow(() => {
      board = JSON.parse(dashboardText()) as Dashboard;
    }, `${DASHBOARD_FILE} is not valid JSON`);
    assert.ok(board);
    assert.equal(board.uid, 'ixapi-operations');
    assert.equal(board.title, 'IX-API provisioning');
    assert.ok(Number(board.schemaVersion) >= 36, `schemaVersion ${board.schemaVersion}`);
    assert.equal(board.refresh, '30s');
    assert.deepEqual(board.time, { from: 'now-6h', to: 'now' });
    assert.ok(queryPanels(board).length > 0, 'the dashboard has no panels');
  });

  it('gives every panel an id of its own', () => {
    const ids = allPanels(dashboard()).map((panel) => panel.id);
    for (const id of ids) assert.ok(Number.isInteger(id), `a panel has the id ${id}`);
    const repeated = ids.filter((id, index) => ids.indexOf(id) !== index);
    assert.deepEqual(repeated, [], 'panel ids are repeated');
  });

  it('gives every panel a title, and every querying panel a description and a unit', () => {
    for (const panel of allPanels(dashboard())) {
      assert.ok(panel.title?.trim(), `panel ${panel.id} has no title`);
    }
    for (const panel of queryPanels(dashboard())) {
      assert.ok(panel.description?.trim(), `${label(panel)} has no description`);
      const unit = panel.fieldConfig?.defaults?.unit;
      assert.ok(unit && UNITS.has(unit), `${label(panel)} has the unit ${unit}`);
    }
  });

  it('places every panel inside the grid, none over another', () => {
    const placed = allPanels(dashboard());
    for (const panel of placed) {
      const grid = panel.gridPos;
      assert.ok(grid, `${label(panel)} has no gridPos`);
      assert.ok(
        grid.w > 0 && grid.h > 0 && grid.x >= 0 && grid.y >= 0,
        `${label(panel)} at ${JSON.stringify(grid)}`,
      );
      assert.ok(grid.x + grid.w <= 24, `${label(panel)} is wider than the grid`);
    }
    for (const [index, a] of placed.entries()) {
      for (const b of placed.slice(index + 1)) {
        assert.ok(!overlap(a.gridPos as Grid, b.gridPos as Grid), `${label(a)} and ${label(b)} overlap`);
      }
    }
  });

  it('queries the provisioned Prometheus datasource only', () => {
    const uid = provisionedUid();
    const board = dashboard();
    for (const panel of queryPanels(board)) {
      assert.ok(panel.targets?.length, `${label(panel)} has no query`);
      assert.equal(panel.datasource?.uid, uid, `${label(panel)}: datasource`);
      for (const target of panel.targets) {
        assert.equal(target.datasource?.uid, uid, `${label(panel)} ${target.refId}: datasource`);
        assert.ok(target.expr?.trim(), `${label(panel)} ${target.refId} has no expression`);
      }
    }
    for (const variable of board.templating?.list ?? []) {
      if (variable.type !== 'query') continue;
      assert.equal(variable.datasource?.uid, uid, `variable $${variable.name}: datasource`);
    }
  });

  it('names only series the processes serve, functions PromQL has and variables the dashboard defines', () => {
    const board = dashboard();
    const defined = new Set((board.templating?.list ?? []).map((variable) => variable.name));
    for (const { where, expr } of queries(board)) {
      const names = namesIn(expr);
      assert.ok(names.series.length > 0, `${where} names no series: ${expr}`);
      for (const series of names.series) {
        assert.ok(KNOWN_SERIES.has(series), `${where} names the unknown series ${series}`);
      }
      for (const name of names.functions) {
        assert.ok(FUNCTIONS.has(name), `${where} calls the unknown function ${name}`);
      }
      for (const name of names.variables) {
        assert.ok(defined.has(name) || BUILT_IN_VARIABLES.has(name), `${where} uses the undefined $${name}`);
      }
    }
  });

  it('takes the gauges every replica reads from the database with max, never adding them up', () => {
    for (const { where, expr } of queries(dashboard())) {
      if (expr.startsWith('label_values(')) continue;
      for (const gauge of SHARED_GAUGES) {
        if (!new RegExp(`\\b${gauge}\\b`).test(expr)) continue;
        assert.ok(takenByMax(expr, gauge), `${where} does not take ${gauge} with max: ${expr}`);
      }
    }
  });

  it('computes quantiles from bucket rates summed by le', () => {
    for (const { where, expr } of queries(dashboard())) {
      if (!expr.includes('_bucket')) continue;
      const match = /^histogram_quantile\(\s*0?\.\d+\s*,\s*sum by \(([^)]*)\)\s*\(rate\(\w+_bucket\b/.exec(
        expr,
      );
      assert.ok(
        match,
        `${where} uses buckets outside histogram_quantile(q, sum by (...) (rate(...))): ${expr}`,
      );
      const labels = match[1].split(',').map((name) => name.trim());
      assert.ok(labels.includes('le'), `${where} does not keep le: ${expr}`);
    }
  });
});
