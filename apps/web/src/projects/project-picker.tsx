import { useEffect, useState } from 'react';
import { type Api, isMissingRoute } from '../api/api.ts';
import { explainError } from '../api/errors.ts';
import type { Project } from '../api/types.ts';
import { useLanguage } from '../i18n.tsx';

/**
 * GET / POST /projects (product API contract). On a gateway without those routes yet (404), the
 * author opens a project by id instead, and is told why.
 */
export function ProjectPicker({
  api,
  onOpen,
}: {
  api: Api;
  onOpen(projectId: string, title?: string): void;
}) {
  const { t, language } = useLanguage();
  const [projects, setProjects] = useState<Project[]>();
  const [unavailable, setUnavailable] = useState(false);
  const [error, setError] = useState<string>();
  const [title, setTitle] = useState('');
  const [projectId, setProjectId] = useState('');

  useEffect(() => {
    api.projects
      .list()
      .then((answer) => setProjects(answer.projects))
      .catch((caught) => (isMissingRoute(caught) ? setUnavailable(true) : setError(explainError(t, caught))));
  }, [api, t]);

  return (
    <main className="picker">
      <h1>{t.projects}</h1>
      {error && (
        <p className="error-box" role="alert">
          {error}
        </p>
      )}
      {unavailable ? (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            if (projectId.trim()) onOpen(projectId.trim());
          }}
        >
          <p className="hint" data-testid="projects-unavailable">
            {t.projectsUnavailable}
          </p>
          <label>
            {t.projectIdLabel}{' '}
            <input
              value={projectId}
              onChange={(event) => setProjectId(event.target.value)}
              data-testid="project-id"
            />
          </label>
          <button type="submit">{t.open}</button>
        </form>
      ) : (
        <>
          {projects?.length === 0 && <p className="hint">{t.noProjects}</p>}
          <ul className="project-list">
            {projects?.map((project) => (
              <li key={project.id}>
                <button type="button" onClick={() => onOpen(project.id, project.title)}>
                  <strong>{project.title}</strong> <span className="hint">{project.role}</span>
                </button>
              </li>
            ))}
          </ul>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              if (!title.trim()) return;
              api.projects
                .create(title.trim(), language)
                .then(({ project }) => onOpen(project.id, project.title))
                .catch((caught) => setError(explainError(t, caught)));
            }}
          >
            <label>
              {t.newProject}{' '}
              <input
                value={title}
                onChange={(event) => setTitle(event.target.value)}
                placeholder={t.projectTitle}
              />
            </label>
            <button type="submit">{t.create}</button>
          </form>
        </>
      )}
    </main>
  );
}
