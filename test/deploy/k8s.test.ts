import { readdirSync, readFileSync } from 'node:fs';
import { CONFIG_KEYS } from '@quill/config';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

interface Container {
  name: string;
  image: string;
  env?: Array<{
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
  }>;
  envFrom?: Array<{ configMapRef?: { name: string } }>;
}
interface Manifest {
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  spec?: { template?: { spec: { containers: Container[] } } };
}

const directory = new URL('../../deploy/k8s/', import.meta.url);
const files = readdirSync(directory).filter(
  (file) => file.endsWith('.yaml') && file !== 'kustomization.yaml',
);
const manifests: Manifest[] = files.flatMap((file) =>
  parseAllDocuments(readFileSync(new URL(file, directory), 'utf8')).map(
    (document) => document.toJS() as Manifest,
  ),
);
const APP_SERVICES = ['gateway', 'router', 'writer', 'reviewer', 'context', 'billing'];
const IMAGE_VARIABLES = new Set(['SERVICE']);
// What each service must read from a Secret: the services refuse to start in production without it.
const REQUIRED_SECRETS: Record<string, string[]> = {
  gateway: ['AUTH_JWT_SECRET', 'LLM_PRIMARY_API_KEY'],
  router: ['LLM_PRIMARY_API_KEY'],
  writer: ['LLM_PRIMARY_API_KEY'],
  reviewer: ['LLM_PRIMARY_API_KEY'],
  context: ['LLM_PRIMARY_API_KEY'],
  billing: [],
};
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD)/;

function containersOf(manifest: Manifest): Container[] {
  return manifest.spec?.template?.spec.containers ?? [];
}

describe('deploy/k8s', () => {
  it('lists every manifest in the kustomization', () => {
    const kustomization = parse(readFileSync(new URL('kustomization.yaml', directory), 'utf8'));
    expect([...kustomization.resources].sort()).toEqual([...files].sort());
  });

  it('has one Deployment per service, running the shared image with the shared config', () => {
    for (const service of APP_SERVICES) {
      const deployment = manifests.find(
        (manifest) => manifest.kind === 'Deployment' && manifest.metadata.name === `quill-${service}`,
      );
      const container = deployment && containersOf(deployment)[0];
      expect(container?.image, service).toBe('quill');
      expect(container?.env?.find((entry) => entry.name === 'SERVICE')?.value).toBe(service);
      expect(container?.envFrom?.[0]?.configMapRef?.name).toBe('quill-config');
    }
    expect(
      manifests.some((manifest) => manifest.kind === 'Service' && manifest.metadata.name === 'quill-gateway'),
    ).toBe(true);
  });

  it('uses only settings that libs/config knows', () => {
    const known = new Set<string>(CONFIG_KEYS);
    const keys = manifests.flatMap((manifest) => [
      ...Object.keys(manifest.data ?? {}),
      ...containersOf(manifest).flatMap((container) => (container.env ?? []).map((entry) => entry.name)),
    ]);
    expect(keys).toContain('NATS_URL');
    for (const key of keys.filter((name) => !IMAGE_VARIABLES.has(name))) {
      expect(known.has(key), `${key} is not in libs/config`).toBe(true);
    }
  });

  it('takes every secret from a required Secret, never from a literal or the ConfigMap', () => {
    const config = manifests.find((manifest) => manifest.kind === 'ConfigMap');
    expect(config?.data?.NODE_ENV).toBe('production');
    for (const manifest of manifests) {
      for (const key of Object.keys(manifest.data ?? {}))
        expect(key, manifest.metadata.name).not.toMatch(SECRET_NAME);
      for (const container of containersOf(manifest)) {
        for (const entry of container.env ?? []) {
          if (!SECRET_NAME.test(entry.name)) continue;
          expect(entry.value, `${container.name} ${entry.name}`).toBeUndefined();
          expect(entry.valueFrom?.secretKeyRef?.name, `${container.name} ${entry.name}`).toBeTruthy();
          expect(entry.valueFrom?.secretKeyRef?.optional ?? false, `${container.name} ${entry.name}`).toBe(
            false,
          );
        }
      }
    }
    for (const [service, secrets] of Object.entries(REQUIRED_SECRETS)) {
      const deployment = manifests.find((manifest) => manifest.metadata.name === `quill-${service}`);
      const names = (containersOf(deployment!)[0]?.env ?? [])
        .filter((entry) => entry.valueFrom?.secretKeyRef)
        .map((entry) => entry.name);
      expect(names.sort(), service).toEqual([...secrets].sort());
    }
  });
});
