import type { ReactElement } from 'react';
import type { Project } from '../../api/projects';
import { Icon } from '../../components/Icon';
import { InlineName } from './InlineName';

interface ProjectCardProps {
  project: Project;
  editMode: boolean;
  selected: boolean;
  onOpen: () => void;
  onToggle: () => void;
  /** absent for a role that may not rename (a viewer) */
  onRename?: (name: string) => Promise<void>;
}

const dateFormat = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric' });

/** A project card: thumbnail, inline-editable name, address and created date; in Edit Projects mode a click selects it. */
export function ProjectCard({ project, editMode, selected, onOpen, onToggle, onRename }: ProjectCardProps): ReactElement {
  return (
    <li className={`project-card${selected ? ' project-card-selected' : ''}`}>
      <button
        type="button"
        className="project-card-media"
        aria-label={editMode ? `${selected ? 'Deselect' : 'Select'} project ${project.name}` : `Open project ${project.name}`}
        aria-pressed={editMode ? selected : undefined}
        onClick={editMode ? onToggle : onOpen}
      >
        {project.thumbnail ? (
          <img src={project.thumbnail} alt="" loading="lazy" />
        ) : (
          <span className="project-card-placeholder">
            <Icon name="folder" size={32} />
          </span>
        )}
        {editMode && (
          <span className={`select-mark${selected ? ' select-mark-on' : ''}`} aria-hidden="true">
            {selected && <Icon name="check" size={18} />}
          </span>
        )}
      </button>
      <div className="project-card-body">
        {onRename ? (
          <InlineName value={project.name} label={`Rename project ${project.name}`} onSave={onRename} className="project-card-name" />
        ) : (
          <p className="project-card-name">{project.name}</p>
        )}
        {project.address && <p className="project-card-address">{project.address}</p>}
        <p className="project-card-date">Created {dateFormat.format(new Date(project.created_at))}</p>
      </div>
    </li>
  );
}
