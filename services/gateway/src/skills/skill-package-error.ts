import type { SkillZipRejection } from '@quill/contracts';

/** Why an uploaded skill package was refused: a stable rule code and the path it concerns. */
export class SkillPackageError extends Error {
  readonly rule: SkillZipRejection;
  readonly path: string | undefined;
  constructor(rule: SkillZipRejection, message: string, path?: string) {
    super(message);
    this.name = new.target.name;
    this.rule = rule;
    this.path = path;
  }
}
