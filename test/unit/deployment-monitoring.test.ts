import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { ComposeFile, Service } from '../support/compose';
import {
  compose,
  dependenciesOf,
  environmentOf,
  mountedSecrets,
  rawCompose,
  read,
  ROOT,
  serviceNamed,
  words,
} from '../support/compose';

/** Static checks of the Prometheus and Grafana services of docker-compose.yml and their configuration in deploy/. */

/** A mount of a service, from Compose's short syntax `source:target[:mode]`. */
interface Mount {
  source: string;
  target: string;
  mode: string;
}

const mountsOf = (service: Service): Mount[] =>
  (service.volumes ?? []).map((volume) => {
    const [source = '', target = '', mode = 'rw'] = String(volume).split(':');
    return { source, target, mode };
  });

/** A bind mount of a file or folder next to docker-compose.yml (the others are named volumes). */
const isBindMount = (mount: Mount): boolean => mount.source.startsWith('.') || mount.source.startsWith('/');

/** The file or folder of the repository a service sees at `containerPath`, if one is mounted there. */
function repositoryPathOf(service: Service, containerPath: string): string | undefined {
  for (const mount of mountsOf(service).filter(isBindMount)) {
    const inside = path.posix.relative(mount.target, containerPath);
    if (inside.startsWith('..') || path.posix.isAbsolute(inside)) continue;
    return path.posix.join(path.posix.normalize(mount.source), inside);
  }
  return undefined;
}

/** The value of a `--flag=value` of a service's command. */
function flagOf(service: Service, flag: string): string | undefined {
  const word = words(service.command).find((item) => item.startsWith(`${flag}=`));
  return word?.slice(flag.length + 1);
}

/** A port from a host:port, :port or URL. */
const portOf = (address: string): number => Number(/:(\d+)\/?$/.exec(address)?.[1]);

interface ScrapeConfig {
  job_name: string;
  static_configs?: { targets: string[] }[];
  dns_sd_configs?: { names: string[]; type?: string; port?: number }[];
}

interface PrometheusConfig {
  global?: { scrape_interval?: string; evaluation_interval?: string };
  rule_files?: string[];
  scrape_configs?: ScrapeConfig[];
}

/** The port Prometheus listens on in its container. */
const prometheusPort = (prometheus: Service): number =>
  portOf(flagOf(prometheus, '--web.listen-address') ?? ':9090');

/** The Prometheus configuration the prometheus service loads, and where it is in the repository. */
function prometheusConfig(file: ComposeFile): { configFile: string; config: PrometheusConfig } {
  const prometheus = serviceNamed(file, 'prometheus');
  const containerPath = flagOf(prometheus, '--config.file');
  assert.ok(containerPath, 'prometheus is not given --config.file');
  const configFile = repositoryPathOf(prometheus, containerPath);
  assert.ok(configFile, `${containerPath} is not mounted into prometheus from the repository`);
  return { configFile, config: parse(read(configFile)) as PrometheusConfig };
}

/** The host:port targets of a scrape job, every name a DNS lookup asks for included. */
const targetsOf = (job: ScrapeConfig): string[] => [
  ...(job.static_configs ?? []).flatMap((config) => config.targets),
  ...(job.dns_sd_configs ?? []).flatMap((config) => config.names.map((name) => `${name}:${config.port}`)),
];

/** The parsed YAML files of a folder of the repository. */
const yamlFilesIn = (folder: string): unknown[] =>
  readdirSync(path.join(ROOT, folder))
    .filter((name) => /\.ya?ml$/.test(name))
    .map((name): unknown => parse(read(path.posix.join(folder, name))));

/** A Prometheus file glob (`*` within one folder) as a regular expression. */
const globPattern = (glob: string): RegExp =>
  new RegExp(
    `^${glob
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]*')}$`,
  );

describe('deployment: Prometheus and Grafana', () => {
  it('mounts only files and folders of the repository, read-only', () => {
    const file = compose();
    for (const [name, service] of Object.entries(file.services)) {
      for (const mount of mountsOf(service)) {
        if (!isBindMount(mount)) {
          assert.ok(file.volumes?.[mount.source], `${name} mounts the undeclared volume ${mount.source}`);
          continue;
        }
        assert.ok(mount.source.startsWith('./'), `${name} mounts ${mount.source}, outside the repository`);
        assert.ok(
          existsSync(path.join(ROOT, mount.source)),
          `${name} mounts ${mount.source}, which does not exist`,
        );
        assert.equal(mount.mode, 'ro', `${name} mounts ${mount.source} writable`);
      }
    }
  });

  it('runs Prometheus from deploy/prometheus, keeping 30 days of samples on a named volume', () => {
    const file = compose();
    const prometheus = serviceNamed(file, 'prometheus');
    const { configFile, config } = prometheusConfig(file);
    assert.equal(configFile, 'deploy/prometheus/prometheus.yml');
    assert.equal(config.global?.scrape_interval, '15s');
    assert.equal(config.global?.evaluation_interval, '15s');
    const storage = flagOf(prometheus, '--storage.tsdb.path');
    const volume = mountsOf(prometheus).find((mount) => mount.target === storage);
    assert.ok(volume && !isBindMount(volume), `--storage.tsdb.path ${storage} is not on a named volume`);
    assert.equal(flagOf(prometheus, '--storage.tsdb.retention.time'), '30d');
    const port = prometheusPort(prometheus);
    assert.ok((prometheus.ports ?? []).length > 0, 'prometheus publishes no port');
    for (const published of prometheus.ports ?? []) {
      assert.equal(
        published,
        `127.0.0.1:${port}:${port}`,
        'prometheus is published on the loopback interface only',
      );
    }
    assert.ok(
      words(prometheus.healthcheck?.test).includes(`http://127.0.0.1:${port}/-/ready`),
      'the health check does not ask /-/ready',
    );
  });

  it("scrapes every api and worker replica, the worker's Temporal SDK and the Temporal server on their ports", () => {
    const file = compose();
    const { config } = prometheusConfig(file);
    const api = environmentOf(serviceNamed(file, 'api'));
    const worker = environmentOf(serviceNamed(file, 'worker'));
    const temporalMetrics = environmentOf(serviceNamed(file, 'temporal')).TEMPORAL_METRICS_ADDRESS ?? '';
    assert.match(temporalMetrics, /^0\.0\.0\.0:\d+$/, 'the Temporal server serves no metrics to the network');
    for (const port of [api.METRICS_PORT, worker.METRICS_PORT, worker.TEMPORAL_METRICS_PORT]) {
      assert.match(port ?? '', /^\d+$/, 'a metrics listener of api or worker is turned off');
    }
    const jobs = config.scrape_configs ?? [];
    assert.deepEqual(Object.fromEntries(jobs.map((job) => [job.job_name, targetsOf(job)])), {
      prometheus: [`localhost:${prometheusPort(serviceNamed(file, 'prometheus'))}`],
      'ixapi-api': [`api:${api.METRICS_PORT}`],
      'ixapi-worker': [`worker:${worker.METRICS_PORT}`],
      'ixapi-temporal-sdk': [`worker:${worker.TEMPORAL_METRICS_PORT}`],
      'temporal-server': [`temporal:${portOf(temporalMetrics)}`],
    });
    // A lookup of the A records of a service name answers every replica's address.
    for (const job of jobs.filter(({ job_name }) => job_name.startsWith('ixapi-'))) {
      assert.equal(job.static_configs, undefined, `${job.job_name} names fixed targets`);
      for (const lookup of job.dns_sd_configs ?? []) assert.equal(lookup.type, 'A', job.job_name);
    }
  });

  it('loads the alert rules from deploy/prometheus/rules, mounted with the configuration', () => {
    const file = compose();
    const prometheus = serviceNamed(file, 'prometheus');
    const globs = (prometheusConfig(file).config.rule_files ?? []).map((ruleFiles) => {
      const glob = repositoryPathOf(prometheus, ruleFiles);
      assert.ok(glob, `rule_files ${ruleFiles} is not mounted from the repository`);
      return glob;
    });
    assert.deepEqual(
      globs.map((glob) => path.posix.dirname(glob)),
      ['deploy/prometheus/rules'],
    );
    const folder = path.join(ROOT, 'deploy/prometheus/rules');
    const ruleFiles = existsSync(folder) ? readdirSync(folder).filter((name) => /\.ya?ml$/.test(name)) : [];
    for (const name of ruleFiles) {
      const loaded = globs.some((glob) => globPattern(glob).test(`deploy/prometheus/rules/${name}`));
      assert.ok(loaded, `deploy/prometheus/rules/${name} is not loaded by rule_files`);
    }
  });

  it('runs Grafana behind a login, its admin password in a secret file', () => {
    const file = rawCompose();
    const grafana = serviceNamed(file, 'grafana');
    const env = environmentOf(grafana);
    assert.equal(env.GF_AUTH_ANONYMOUS_ENABLED, 'false');
    assert.equal(env.GF_SECURITY_ADMIN_PASSWORD, undefined);
    assert.equal(
      mountedSecrets(file, 'grafana').get(env.GF_SECURITY_ADMIN_PASSWORD__FILE ?? ''),
      'grafana_admin_password',
    );
    assert.deepEqual(
      grafana.ports,
      ['127.0.0.1:3000:3000'],
      'grafana is published on the loopback interface only',
    );
    assert.ok(words(grafana.healthcheck?.test).includes('http://127.0.0.1:3000/api/health'));
    assert.equal(dependenciesOf(grafana).prometheus, 'service_healthy');
  });

  it('provisions the prometheus service as datasource and the dashboards of deploy/grafana/dashboards', () => {
    const file = compose();
    const grafana = serviceNamed(file, 'grafana');
    const env = environmentOf(grafana);
    const provisioning = repositoryPathOf(grafana, env.GF_PATHS_PROVISIONING ?? '/etc/grafana/provisioning');
    assert.equal(provisioning, 'deploy/grafana/provisioning');

    type Datasources = { datasources?: { type?: string; url?: string; isDefault?: boolean }[] };
    const sources = yamlFilesIn(`${provisioning}/datasources`).flatMap(
      (content) => (content as Datasources).datasources ?? [],
    );
    const prometheus = sources.filter((source) => source.type === 'prometheus');
    assert.equal(prometheus.length, 1, 'one Prometheus datasource');
    assert.equal(prometheus[0].isDefault, true);
    assert.equal(
      prometheus[0].url,
      `http://prometheus:${prometheusPort(serviceNamed(file, 'prometheus'))}`,
      'the datasource is not the prometheus service',
    );

    type Providers = { providers?: { type?: string; options?: { path?: string } }[] };
    const providers = yamlFilesIn(`${provisioning}/dashboards`).flatMap(
      (content) => (content as Providers).providers ?? [],
    );
    assert.ok(providers.length > 0, 'no dashboard provider');
    for (const provider of providers) {
      assert.equal(provider.type, 'file');
      assert.equal(repositoryPathOf(grafana, provider.options?.path ?? ''), 'deploy/grafana/dashboards');
    }
    const dashboards = readdirSync(path.join(ROOT, 'deploy/grafana/dashboards')).filter((name) =>
      name.endsWith('.json'),
    );
    assert.ok(dashboards.length > 0, 'deploy/grafana/dashboards holds no dashboard');
    const home = repositoryPathOf(grafana, env.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH ?? '');
    assert.ok(home && existsSync(path.join(ROOT, home)), `the home dashboard ${home} does not exist`);
    assert.equal(path.posix.dirname(home), 'deploy/grafana/dashboards');
  });
});
