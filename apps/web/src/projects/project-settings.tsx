import { useEffect, useState } from 'react';
import { type Api, isMissingRoute } from '../api/api.ts';
import { explainError } from '../api/errors.ts';
import type { Member, Project } from '../api/types.ts';
import { useT } from '../i18n.tsx';

/**
 * Rename and archive the open project, and its members for the owner (product API contract:
 * PATCH /projects/:id, /projects/:id/members). Hidden on a gateway without those routes yet.
 */
export function ProjectSettings({
  api,
  projectId,
  onArchived,
}: {
  api: Api;
  projectId: string;
  onArchived(): void;
}) {
  const t = useT();
  const [project, setProject] = useState<Project>();
  const [members, setMembers] = useState<Member[]>([]);
  const [title, setTitle] = useState('');
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'editor' | 'viewer'>('editor');
  const [error, setError] = useState<string>();
  const fail = (caught: unknown) => setError(explainError(t, caught));

  useEffect(() => {
    api.projects
      .get(projectId)
      .then(({ project: loaded }) => {
        setProject(loaded);
        setTitle(loaded.title);
        if (loaded.role === 'owner')
          api.projects
            .members(projectId)
            .then((answer) => setMembers(answer.members))
            .catch(() => setMembers([]));
      })
      .catch((caught) => !isMissingRoute(caught) && setError(explainError(t, caught)));
  }, [api, projectId, t]);

  if (!project) return error ? <p className="error-box">{error}</p> : null;
  const canEdit = project.role !== 'viewer';
  return (
    <details className="project-settings">
      <summary>
        {project.title} <span className="hint">{project.role}</span>
      </summary>
      {error && <p className="error-box">{error}</p>}
      {canEdit && (
        <form
          className="row"
          onSubmit={(event) => {
            event.preventDefault();
            api.projects
              .update(projectId, { title: title.trim() })
              .then(({ project: saved }) => setProject(saved))
              .catch(fail);
          }}
        >
          <input
            value={title}
            onChange={(event) => setTitle(event.target.value)}
            aria-label={t.projectTitle}
          />
          <button type="submit">{t.rename}</button>
        </form>
      )}
      {project.role === 'owner' && (
        <>
          <button
            type="button"
            onClick={() => api.projects.update(projectId, { archived: true }).then(onArchived).catch(fail)}
          >
            {t.archive}
          </button>
          <h3>{t.members}</h3>
          <ul className="members">
            {members.map((member) => (
              <li key={member.user_id}>
                {member.display_name || member.email} <span className="hint">{member.role}</span>
                {member.role !== 'owner' && (
                  <button
                    type="button"
                    onClick={() =>
                      api.projects
                        .removeMember(projectId, member.user_id)
                        .then(() => setMembers(members.filter((other) => other.user_id !== member.user_id)))
                        .catch(fail)
                    }
                  >
                    {t.remove}
                  </button>
                )}
              </li>
            ))}
          </ul>
          <form
            className="row"
            onSubmit={(event) => {
              event.preventDefault();
              api.projects
                .addMember(projectId, email.trim(), role)
                .then(({ member }) => {
                  setMembers([...members, member]);
                  setEmail('');
                })
                .catch(fail);
            }}
          >
            <input
              type="email"
              value={email}
              onChange={(event) => setEmail(event.target.value)}
              placeholder="e-mail"
              aria-label={t.addMember}
            />
            <select value={role} onChange={(event) => setRole(event.target.value as 'editor' | 'viewer')}>
              <option value="editor">editor</option>
              <option value="viewer">viewer</option>
            </select>
            <button type="submit">{t.addMember}</button>
          </form>
        </>
      )}
    </details>
  );
}
