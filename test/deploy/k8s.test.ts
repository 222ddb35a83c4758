import { fileURLToPath } from 'node:url';
import { CONFIG_KEYS, ConfigSchema } from '@quill/config';
import { describe, expect, it } from 'vitest';
import { validateManifest } from './k8s-validate.ts';
import { type Manifest, renderKustomization } from './kustomize.ts';

interface EnvEntry {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
}
interface Probe {
  httpGet?: { path: string; port: string | number };
  timeoutSeconds?: number;
  periodSeconds?: number;
  failureThreshold?: number;
}
interface Container {
  name: string;
  image: string;
  env?: EnvEntry[];
  envFrom?: Array<{ configMapRef?: { name: string } }>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: Record<string, unknown>;
  terminationGracePeriodSeconds?: number;
}

const overlay = (name: string) =>
  fileURLToPath(new URL(`../../deploy/k8s/overlays/${name}`, import.meta.url));
const OVERLAYS = {
  dev: renderKustomization(overlay('dev')),
  production: renderKustomization(overlay('production')),
};
const DEPLOYMENTS = ['gateway', 'router', 'writer', 'planner', 'reviewer', 'context', 'billing'];
const WORKER_ROLES: Record<string, string[]> = {
  writer: ['role_writer'],
  planner: ['role_planner', 'role_hook_designer'],
  reviewer: ['role_quality_reviewer'],
};
// Read by the image's CMD (SERVICE), not by libs/config.
const IMAGE_VARIABLES = new Set(['SERVICE']);
const CREDENTIALS = ['NATS_URL', 'REDIS_URL', 'DATABASE_URL', 'AUTH_JWT_SECRET', 'LLM_PRIMARY_API_KEY'];
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD)/;

const podSpecOf = (manifest: Manifest) =>
  (manifest.spec as { template?: { spec: PodSpec } } | undefined)?.template?.spec;
const find = (manifests: Manifest[], kind: string, name: string) =>
  manifests.find((manifest) => manifest.kind === kind && manifest.metadata.name === name);
const configOf = (manifests: Manifest[]) =>
  (find(manifests, 'ConfigMap', 'quill-config') as unknown as { data: Record<string, string> }).data;

describe.each(Object.entries(OVERLAYS))('deploy/k8s overlay %s', (name, manifests) => {
  it('renders only manifests valid against the Kubernetes and KEDA CRD schemas', async () => {
    expect(manifests.length).toBeGreaterThan(20);
    for (const manifest of manifests) await validateManifest(manifest);
  });

  it('has one Deployment per service, each with requests, limits and the three probes', () => {
    for (const service of DEPLOYMENTS) {
      const spec = podSpecOf(find(manifests, 'Deployment', `quill-${service}`)!)!;
      const container = spec.containers[0]!;
      expect(container.image, service).toMatch(
        name === 'dev' ? /^quill-dev:/ : /^registry\.example\.com\/quill\/quill:/,
      );
      expect(Object.keys(container.resources?.requests ?? {}).sort(), service).toEqual(['cpu', 'memory']);
      expect(Object.keys(container.resources?.limits ?? {}).sort(), service).toEqual(['cpu', 'memory']);
      expect(container.livenessProbe?.httpGet?.path, service).toBe('/livez');
      expect(container.readinessProbe?.httpGet?.path, service).toBe('/readyz');
      expect(container.startupProbe?.httpGet?.path, service).toBe('/livez');
      // Readiness tolerates a slow answer and one miss; a start-up may take two minutes.
      expect(
        container.readinessProbe!.failureThreshold! * container.readinessProbe!.periodSeconds!,
      ).toBeGreaterThanOrEqual(10);
      expect(
        container.startupProbe!.failureThreshold! * container.startupProbe!.periodSeconds!,
      ).toBeGreaterThanOrEqual(60);
    }
  });

  it('runs every pod non-root with a read-only root filesystem and no privilege escalation', () => {
    for (const manifest of manifests.filter((candidate) => podSpecOf(candidate))) {
      const spec = podSpecOf(manifest)!;
      expect(spec.securityContext?.runAsNonRoot, manifest.metadata.name).toBe(true);
      for (const container of [...spec.containers, ...(spec.initContainers ?? [])]) {
        expect(container.securityContext, `${manifest.metadata.name}/${container.name}`).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(
          container.resources?.limits?.memory,
          `${manifest.metadata.name}/${container.name}`,
        ).toBeTruthy();
      }
    }
  });

  it('gives every shutdown its drain window inside the termination grace', () => {
    const shutdownMs = Number(
      configOf(manifests).SHUTDOWN_TIMEOUT_MS ?? ConfigSchema.shape.SHUTDOWN_TIMEOUT_MS.parse(undefined),
    );
    for (const service of DEPLOYMENTS) {
      const spec = podSpecOf(find(manifests, 'Deployment', `quill-${service}`)!)!;
      const preStop = spec.containers[0]!.lifecycle?.preStop?.exec?.command;
      const preStopMs = preStop?.[0] === 'sleep' ? Number(preStop[1]) * 1000 : 0;
      expect(spec.terminationGracePeriodSeconds! * 1000, service).toBeGreaterThan(shutdownMs + preStopMs);
    }
  });

  it('takes every credential from a required Secret, never from the ConfigMap or a literal', () => {
    const config = configOf(manifests);
    for (const key of CREDENTIALS) expect(config, key).not.toHaveProperty(key);
    for (const key of Object.keys(config)) expect(key).not.toMatch(SECRET_NAME);
    for (const manifest of manifests.filter((candidate) => podSpecOf(candidate))) {
      for (const container of podSpecOf(manifest)!.containers) {
        for (const entry of container.env ?? []) {
          if (!CREDENTIALS.includes(entry.name) && !SECRET_NAME.test(entry.name)) continue;
          expect(entry.value, `${container.name} ${entry.name}`).toBeUndefined();
          expect(entry.valueFrom?.secretKeyRef?.name, `${container.name} ${entry.name}`).toMatch(/^quill-/);
          expect(entry.valueFrom?.secretKeyRef?.optional ?? false).toBe(false);
        }
      }
    }
    const env = (service: string) =>
      (podSpecOf(find(manifests, 'Deployment', `quill-${service}`)!)!.containers[0]!.env ?? [])
        .filter((entry) => entry.valueFrom?.secretKeyRef)
        .map((entry) => entry.name)
        .sort();
    expect(env('gateway')).toEqual([
      'AUTH_JWT_SECRET',
      'DATABASE_URL',
      'LLM_PRIMARY_API_KEY',
      'NATS_URL',
      'REDIS_URL',
    ]);
    expect(env('billing')).toEqual(['DATABASE_URL', 'NATS_URL', 'REDIS_URL']);
  });

  it('uses only settings that libs/config knows', () => {
    const known = new Set<string>(CONFIG_KEYS);
    const keys = [
      ...Object.keys(configOf(manifests)),
      ...manifests.flatMap((manifest) =>
        (podSpecOf(manifest)?.containers ?? []).flatMap((container) =>
          (container.env ?? []).map((entry) => entry.name),
        ),
      ),
    ];
    for (const key of keys.filter((entry) => !IMAGE_VARIABLES.has(entry)))
      expect(known.has(key), key).toBe(true);
  });

  it('scales each worker role on its own JetStream consumer and the gateways with an HPA', () => {
    for (const [deployment, consumers] of Object.entries(WORKER_ROLES)) {
      const scaled = find(manifests, 'ScaledObject', `quill-${deployment}`) as
        | {
            spec: {
              scaleTargetRef: { name: string };
              triggers: Array<{ type: string; metadata: Record<string, string> }>;
            };
          }
        | undefined;
      expect(scaled?.spec.scaleTargetRef.name, deployment).toBe(`quill-${deployment}`);
      expect(scaled!.spec.triggers.map((trigger) => trigger.type)).toEqual(
        consumers.map(() => 'nats-jetstream'),
      );
      expect(
        scaled!.spec.triggers.map((trigger) => [trigger.metadata.stream, trigger.metadata.consumer]),
      ).toEqual(consumers.map((consumer) => ['TASKS', consumer]));
      const roles = podSpecOf(
        find(manifests, 'Deployment', `quill-${deployment}`)!,
      )!.containers[0]!.env?.find((entry) => entry.name === 'ROLES')?.value;
      // The Deployment serves exactly the roles whose lag scales it (the reviewer serves its one role by default).
      if (roles) expect(roles.split(',').map((role) => `role_${role}`)).toEqual(consumers);
    }
    const hpa = find(manifests, 'HorizontalPodAutoscaler', 'quill-gateway') as unknown as {
      spec: { minReplicas: number };
    };
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    for (const service of DEPLOYMENTS)
      expect(find(manifests, 'PodDisruptionBudget', `quill-${service}`), service).toBeTruthy();
  });

  it('denies traffic by default and lets the apps wait for their release’s migrations', () => {
    const deny = find(manifests, 'NetworkPolicy', 'quill-default-deny') as unknown as {
      spec: { policyTypes: string[] };
    };
    expect(deny.spec.policyTypes.sort()).toEqual(['Egress', 'Ingress']);
    const jobs = manifests.filter((manifest) => manifest.kind === 'Job');
    expect(jobs).toHaveLength(1);
    const jobImage = podSpecOf(jobs[0]!)!.containers[0]!.image;
    for (const service of DEPLOYMENTS) {
      const init = podSpecOf(find(manifests, 'Deployment', `quill-${service}`)!)!.initContainers ?? [];
      expect(
        init.map((container) => container.name),
        service,
      ).toEqual(['wait-for-migrations']);
      expect(init[0]!.image).toBe(jobImage);
    }
  });
});

describe('deploy/k8s production', () => {
  const manifests = OVERLAYS.production;

  it('names the migration Job after the image tag, so each release runs its own Job', () => {
    const job = manifests.find((manifest) => manifest.kind === 'Job')!;
    const tag = podSpecOf(job)!.containers[0]!.image.split(':')[1]!;
    expect(job.metadata.name).toBe(`quill-migrate-${tag.replaceAll('.', '-')}`);
  });

  it('ships no test double: no fake LLM workload, image or URL', () => {
    const text = JSON.stringify(manifests);
    expect(text).not.toContain('fake-llm');
    expect(text).not.toContain('quill-dev');
    expect(manifests.some((manifest) => manifest.kind === 'Secret')).toBe(false);
    expect(configOf(manifests).NODE_ENV).toBe('production');
  });
});

describe('manifest validation', () => {
  it('rejects a manifest that breaks its schema (the validator can fail)', async () => {
    const broken = structuredClone(find(OVERLAYS.production, 'Deployment', 'quill-writer')!);
    (podSpecOf(broken)!.containers[0] as unknown as { ports: unknown }).ports = [{ containerPort: 'nine' }];
    await expect(validateManifest(broken)).rejects.toThrow(/quill-writer/);
    const scaled = structuredClone(find(OVERLAYS.production, 'ScaledObject', 'quill-writer')!);
    (scaled.spec as { triggers: unknown }).triggers = 'nats';
    await expect(validateManifest(scaled)).rejects.toThrow(/ScaledObject/);
  });
});
