import { readFileSync } from 'node:fs';
import { CONFIG_KEYS } from '@quill/config';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

interface ComposeService {
  image?: string;
  build?: { context?: string; dockerfile?: string };
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
  healthcheck?: { test: string[] | string };
  profiles?: string[];
  volumes?: string[];
}

const composeText = readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8');
const compose = parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8'), {
  // Compose resolves `<<:` merge keys; the shared environment and dependencies rely on them.
  merge: true,
}) as { services: Record<string, ComposeService> };
const services = compose.services;

const APP_SERVICES = ['gateway', 'router', 'writer', 'reviewer', 'context', 'billing'];
const INFRASTRUCTURE = ['nats', 'redis', 'postgres', 'jaeger', 'fake-llm'];
// Read by the image's CMD to pick services/<SERVICE>/src/main.ts, not by the application.
const IMAGE_VARIABLES = new Set(['SERVICE']);

function environmentOf(service: ComposeService): Record<string, string> {
  const environment = service.environment ?? {};
  if (Array.isArray(environment)) {
    return Object.fromEntries(environment.map((entry) => entry.split(/=(.*)/s).slice(0, 2)));
  }
  return Object.fromEntries(Object.entries(environment).map(([key, value]) => [key, String(value ?? '')]));
}

function commandOf(service: ComposeService): string[] {
  return typeof service.command === 'string' ? service.command.split(/\s+/) : (service.command ?? []);
}

describe('docker-compose.yml', () => {
  it('declares the six services and the infrastructure they need', () => {
    for (const name of [...APP_SERVICES, ...INFRASTRUCTURE, 'migrate']) {
      expect(services, name).toHaveProperty(name);
    }
  });

  it('runs NATS with JetStream enabled', () => {
    expect(commandOf(services.nats!)).toContain('-js');
  });

  it('builds every service from deploy/Dockerfile with the shared connection settings', () => {
    for (const name of APP_SERVICES) {
      const service = services[name]!;
      expect(service.build?.dockerfile, name).toBe('deploy/Dockerfile');
      const environment = environmentOf(service);
      expect(environment.SERVICE, name).toBe(name);
      for (const key of ['NATS_URL', 'REDIS_URL', 'DATABASE_URL', 'OTEL_EXPORTER_OTLP_ENDPOINT']) {
        expect(environment[key], `${name} ${key}`).toBeTruthy();
      }
      expect(environment.NATS_URL).toBe('nats://nats:4222');
      expect(environment.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://jaeger:4318');
    }
  });

  it('starts application services only after infrastructure is healthy and migrations ran', () => {
    for (const name of APP_SERVICES) {
      const dependsOn = services[name]!.depends_on as Record<string, { condition: string }>;
      expect(dependsOn.nats?.condition, name).toBe('service_healthy');
      expect(dependsOn.postgres?.condition, name).toBe('service_healthy');
      expect(dependsOn.migrate?.condition, name).toBe('service_completed_successfully');
    }
  });

  it('publishes the gateway on all interfaces', () => {
    expect(services.gateway!.ports?.length).toBeGreaterThan(0);
    expect(environmentOf(services.gateway!).GATEWAY_HOST).toBe('0.0.0.0');
  });

  it('uses only settings that libs/config knows, so compose cannot drift from config', () => {
    const known = new Set<string>(CONFIG_KEYS);
    const quillImageServices = Object.entries(services).filter(
      ([, service]) => service.build?.dockerfile === 'deploy/Dockerfile',
    );
    expect(quillImageServices.length).toBeGreaterThanOrEqual(APP_SERVICES.length + 2);
    for (const [name, service] of quillImageServices) {
      for (const key of Object.keys(environmentOf(service))) {
        if (IMAGE_VARIABLES.has(key)) continue;
        expect(known.has(key), `${name} sets ${key}, which is not in libs/config`).toBe(true);
      }
    }
  });

  it("takes the secrets from the operator's environment, failing when one is unset", () => {
    // `${NAME:?message}`: compose itself refuses to start without the variable.
    const required = (name: string) => new RegExp(`^\\$\\{${name}:\\?[^}]+\\}$`);
    const gateway = environmentOf(services.gateway!);
    expect(gateway.AUTH_JWT_SECRET).toMatch(required('AUTH_JWT_SECRET'));
    for (const name of APP_SERVICES) {
      const environment = environmentOf(services[name]!);
      expect(environment.LLM_PRIMARY_API_KEY, name).toMatch(required('LLM_PRIMARY_API_KEY'));
      for (const [key, value] of Object.entries(environment)) {
        if (/(KEY|TOKEN|SECRET|PASSWORD)/.test(key)) expect(value, `${name} ${key}`).toMatch(/^\$\{/);
      }
    }
  });

  it('gives every long-running service a healthcheck; the Quill services use /readyz on the ops port', () => {
    for (const [name, service] of Object.entries(services)) {
      if (name === 'migrate') continue; // a one-shot job: its exit code is its health
      expect(service.healthcheck?.test, name).toBeTruthy();
    }
    for (const name of APP_SERVICES) {
      expect(JSON.stringify(services[name]!.healthcheck!.test), name).toContain(
        'http://127.0.0.1:9464/readyz',
      );
      expect(environmentOf(services[name]!).OPS_PORT, name).toBe('9464');
      expect(environmentOf(services[name]!).OPS_HOST, name).toBe('0.0.0.0');
    }
  });

  it('builds the services from the production target and only the fake LLM from dev', () => {
    const targets = /^\s+target: (\w+)$/gm;
    expect([...composeText.matchAll(targets)].map((match) => match[1])).toEqual(['production', 'dev']);
    expect(services['fake-llm']!.image).toBe('quill-dev:local');
    for (const name of APP_SERVICES) expect(services[name]!.image, name).toBe('quill:local');
  });

  it('offers Prometheus and Grafana in the optional monitoring profile, scraping every service', () => {
    expect(services.prometheus?.profiles).toEqual(['monitoring']);
    expect(services.grafana?.profiles).toEqual(['monitoring']);
    for (const name of [...APP_SERVICES, ...INFRASTRUCTURE])
      expect(services[name]!.profiles, name).toBeUndefined();
    const prometheus = parse(
      readFileSync(new URL('../../deploy/prometheus/prometheus.yml', import.meta.url), 'utf8'),
    );
    const discovery = prometheus.scrape_configs[0].dns_sd_configs[0];
    expect([...discovery.names].sort()).toEqual([...APP_SERVICES].sort());
    expect(discovery.port).toBe(9464);
    expect(prometheus.rule_files).toEqual(['/etc/prometheus/alerts.yml']);
    expect(services.prometheus!.volumes).toContain(
      './deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro',
    );
  });
});

describe('deploy/Dockerfile', () => {
  const dockerfile = readFileSync(new URL('../../deploy/Dockerfile', import.meta.url), 'utf8');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const stage = (name: string) => stages.find((text) => text.split('\n')[0]!.includes(` AS ${name}`))!;

  it('builds production last (the default target), from the app stage, without the fake LLM', () => {
    expect(stages.at(-1)!.split('\n')[0]).toBe('app AS production');
    for (const name of ['app', 'production']) {
      expect(stage(name), name).not.toMatch(/COPY test/);
    }
    expect(stage('app')).toContain('rm -rf test node_modules/@quill/fake-llm');
    expect(stage('dev')).toContain('COPY test/fake-llm');
    expect(stage('production')).toContain('USER node');
  });

  it('fills the compile cache the services read, as the user they run as', () => {
    expect(stage('app')).toContain('ENV NODE_COMPILE_CACHE=/app/.compile-cache');
    for (const name of ['dev', 'production']) {
      const text = stage(name);
      const user = text.indexOf('USER node');
      const fill = text.indexOf('RUN node scripts/compile-cache.ts');
      expect(user, name).toBeGreaterThan(-1);
      // Node keeps a cache directory per user id: filled as root, it would be missed by uid 1000.
      expect(fill, name).toBeGreaterThan(user);
    }
  });
});
