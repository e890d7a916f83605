import type { ReactElement } from 'react';
import { Icon } from '../../components/Icon';

/**
 * Projects list. The project calls and cards come with the projects work; until then this view shows the
 * honest state of a new account: no projects.
 */
export function ProjectsView(): ReactElement {
  return (
    <section className="view" aria-labelledby="projects-title">
      <header className="view-header">
        <h1 id="projects-title">Projects</h1>
      </header>
      <div className="empty-state">
        <span className="empty-icon">
          <Icon name="folder" size={28} />
        </span>
        <h2>No projects yet</h2>
        <p>Projects hold your renders and everything generated from them.</p>
      </div>
    </section>
  );
}
