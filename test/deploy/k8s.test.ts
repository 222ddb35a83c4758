import { readdirSync, readFileSync } from 'node:fs';
import { CONFIG_KEYS } from '@quill/config';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

interface Container {
  name: string;
  image: string;
  env?: Array<{ name: string; value?: string }>;
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
});
