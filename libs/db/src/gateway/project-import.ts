import type pg from 'pg';
import { withTransaction } from '../pool.ts';
import { setFileVisibility } from '../shared-tables/file-edits.ts';
import { createFile } from '../shared-tables/files.ts';
import { updateProjectWorkspace } from '../shared-tables/project-workspace.ts';
import { createProject, type Project } from './projects.ts';

/**
 * A whole project from an archive (README "HTTP API", import): the project, its info and its
 * files in order, in one transaction, so a failed import leaves nothing behind. Each file's text
 * is its author version 1.
 */
export async function importProject(
  pool: pg.Pool,
  ownerId: string,
  input: {
    title: string;
    projectType: string;
    language: string;
    notes: string;
    info: Record<string, unknown>;
    files: ReadonlyArray<{
      title: string;
      fileType: string;
      folder: string;
      content: string;
      visibility: string;
      /** For an AI draft: the index in `files` of its original. */
      draftOfOrder: number | null;
    }>;
  },
): Promise<Project> {
  return withTransaction(pool, async (client) => {
    const project = await createProject(client, {
      ownerId,
      title: input.title,
      projectType: input.projectType,
      language: input.language,
      notes: input.notes,
    });
    if (Object.keys(input.info).length > 0)
      await updateProjectWorkspace(client, project.id, { info: input.info });
    const ids: string[] = [];
    for (const file of input.files) {
      const created = await createFile(client, {
        projectId: project.id,
        title: file.title,
        fileType: file.fileType,
        folder: file.folder,
        content: file.content,
        source: 'author',
      });
      ids.push(created.id);
      if (file.visibility !== 'all') await setFileVisibility(client, project.id, created.id, file.visibility);
    }
    for (const [index, file] of input.files.entries()) {
      const original = file.draftOfOrder === null ? undefined : ids[file.draftOfOrder];
      if (original !== undefined)
        await client.query('UPDATE files SET draft_of = $2 WHERE id = $1', [ids[index], original]);
    }
    return project;
  });
}
