import {
  DndContext,
  KeyboardSensor,
  PointerSensor,
  closestCenter,
  useSensor,
  useSensors,
  type Announcements,
  type DragEndEvent,
  type ScreenReaderInstructions,
  type UniqueIdentifier,
} from '@dnd-kit/core';
import { SortableContext, sortableKeyboardCoordinates, useSortable, verticalListSortingStrategy } from '@dnd-kit/sortable';
import { CSS } from '@dnd-kit/utilities';
import type { ReactElement } from 'react';
import type { AssemblyClip } from '../../api/videoAssembly';
import { Icon } from '../../components/Icon';
import { durationText } from '../ContentLibrary/libraryItems';
import { MAX_ASSEMBLY_CLIPS } from './clipSelection';
import { clipName } from './clipText';

const INSTRUCTIONS: ScreenReaderInstructions = {
  draggable:
    'To reorder a clip, press Space or Enter to pick it up. Use the Up and Down arrow keys to move it, then press Space or Enter again to drop it in its new place, or Escape to cancel.',
};

function announcementsFor(order: readonly string[], nameOf: (id: UniqueIdentifier) => string): Announcements {
  const position = (id: UniqueIdentifier | undefined) => (id === undefined ? 0 : order.indexOf(String(id)) + 1);
  return {
    onDragStart: ({ active }) => `Picked up ${nameOf(active.id)}, clip ${position(active.id)} of ${order.length}.`,
    onDragOver: ({ active, over }) => (over ? `${nameOf(active.id)} is over position ${position(over.id)} of ${order.length}.` : `${nameOf(active.id)} is no longer over the list.`),
    onDragEnd: ({ active, over }) => (over ? `Dropped ${nameOf(active.id)} at position ${position(over.id)} of ${order.length}.` : `Dropped ${nameOf(active.id)}.`),
    onDragCancel: ({ active }) => `Reordering cancelled. ${nameOf(active.id)} stays at position ${position(active.id)}.`,
  };
}

function SortableClip({ clip, index, onRemove, onPreview }: { clip: AssemblyClip; index: number; onRemove: () => void; onPreview: () => void }): ReactElement {
  const { attributes, listeners, setNodeRef, setActivatorNodeRef, transform, transition, isDragging } = useSortable({ id: clip.id });
  const name = clipName(clip);
  return (
    <li
      ref={setNodeRef}
      className={`selected-clip${isDragging ? ' selected-clip-dragging' : ''}`}
      style={{ transform: CSS.Transform.toString(transform), transition }}
      data-clip-id={clip.id}
    >
      <button type="button" ref={setActivatorNodeRef} className="icon-button drag-handle" aria-label={`Reorder ${name}`} {...attributes} {...listeners}>
        <Icon name="grip" size={18} />
      </button>
      <span className="selected-clip-number" aria-hidden="true">
        {index + 1}
      </span>
      <button type="button" className="selected-clip-thumb" aria-label={`Preview ${name}`} onClick={onPreview}>
        {clip.thumbnail_url ? <img src={clip.thumbnail_url} alt="" /> : <Icon name="film" size={18} />}
      </button>
      <span className="selected-clip-text">
        <span className="selected-clip-name">{name}</span>
        <span className="muted">
          {clip.project_name}
          {clip.duration !== null ? ` · ${durationText(clip.duration)}` : ''}
        </span>
      </span>
      <button type="button" className="icon-button" aria-label={`Remove ${name}`} onClick={onRemove}>
        <Icon name="close" size={18} />
      </button>
    </li>
  );
}

/** The selected clips in play order: dragged with the mouse or touch, or moved with the keyboard (dnd-kit). */
export function SelectedClipsPanel({
  clips,
  onReorder,
  onRemove,
  onClear,
  onPreview,
}: {
  clips: readonly AssemblyClip[];
  onReorder: (activeId: string, overId: string) => void;
  onRemove: (id: string) => void;
  onClear: () => void;
  onPreview: (clip: AssemblyClip) => void;
}): ReactElement {
  const sensors = useSensors(
    useSensor(PointerSensor, { activationConstraint: { distance: 4 } }),
    useSensor(KeyboardSensor, { coordinateGetter: sortableKeyboardCoordinates }),
  );
  const order = clips.map((c) => c.id);
  const nameOf = (id: UniqueIdentifier) => {
    const clip = clips.find((c) => c.id === String(id));
    return clip ? clipName(clip) : 'clip';
  };

  function onDragEnd(event: DragEndEvent): void {
    if (event.over && event.active.id !== event.over.id) onReorder(String(event.active.id), String(event.over.id));
  }

  return (
    <section className="panel assembly-selected" aria-labelledby="assembly-selected-title">
      <header className="assembly-panel-head">
        <h2 id="assembly-selected-title">
          Selected clips <span className="muted">({clips.length}/{MAX_ASSEMBLY_CLIPS})</span>
        </h2>
        {clips.length > 0 && (
          <button type="button" className="link-button assembly-clear" onClick={onClear}>
            Clear selection
          </button>
        )}
      </header>
      {clips.length === 0 ? (
        <p className="muted">Choose up to {MAX_ASSEMBLY_CLIPS} clips of one orientation. Drag them into the order the video plays them.</p>
      ) : (
        <DndContext sensors={sensors} collisionDetection={closestCenter} onDragEnd={onDragEnd} accessibility={{ announcements: announcementsFor(order, nameOf), screenReaderInstructions: INSTRUCTIONS }}>
          <SortableContext items={order} strategy={verticalListSortingStrategy}>
            <ol className="selected-clips" aria-label="Selected clips in play order">
              {clips.map((clip, index) => (
                <SortableClip key={clip.id} clip={clip} index={index} onRemove={() => onRemove(clip.id)} onPreview={() => onPreview(clip)} />
              ))}
            </ol>
          </SortableContext>
        </DndContext>
      )}
    </section>
  );
}
