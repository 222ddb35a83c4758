const FALLBACK_SERVICE_NAME = 'quill';

/**
 * The OTel service name: explicit configuration wins; otherwise the entry file names it
 * (`services/writer/src/main.ts` → `quill-writer`), so one image serves every service without
 * per-service settings.
 */
export function resolveServiceName(configured: string | undefined, entryPath: string | undefined): string {
  if (configured) return configured;
  const match = entryPath?.replaceAll('\\', '/').match(/([^/]+)\/src\/main\.ts$/);
  return match?.[1] ? `quill-${match[1]}` : FALLBACK_SERVICE_NAME;
}
