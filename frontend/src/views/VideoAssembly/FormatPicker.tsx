import type { ReactElement } from 'react';
import { ASSEMBLY_FORMATS, ASSEMBLY_FORMAT_SPECS, type AssemblyFormat } from '../../../../domain/assembly';

interface FormatPickerProps {
  /** The formats chosen (at least one), in the picker's order. */
  formats: readonly AssemblyFormat[];
  /** The platform's own format, marked as such. */
  own: AssemblyFormat | null;
  disabled: boolean;
  onChange: (formats: AssemblyFormat[]) => void;
}

/**
 * Which formats the assembly renders from its one edit (issue 44 item 4): one or more of 9:16, 1:1, 4:5 and 16:9, the
 * platform's own by default. Each becomes its own item in Approvals. The last chosen one cannot be unticked.
 */
export function FormatPicker({ formats, own, disabled, onChange }: FormatPickerProps): ReactElement {
  const toggle = (format: AssemblyFormat, on: boolean): void => {
    const next = ASSEMBLY_FORMATS.filter((f) => (f === format ? on : formats.includes(f)));
    if (next.length > 0) onChange(next);
  };
  return (
    <fieldset className="assembly-formats" aria-describedby="assembly-formats-hint">
      <legend>Formats</legend>
      <p id="assembly-formats-hint" className="muted small">
        Each format is its own video in Approvals.
      </p>
      <div className="assembly-formats-list">
        {ASSEMBLY_FORMATS.map((format) => {
          const spec = ASSEMBLY_FORMAT_SPECS[format];
          const checked = formats.includes(format);
          const id = `assembly-format-${spec.slug}`;
          return (
            <div key={format} className="checkbox-field">
              <input id={id} type="checkbox" checked={checked} disabled={disabled || (checked && formats.length === 1)} onChange={(e) => toggle(format, e.target.checked)} />
              <label htmlFor={id}>
                {format} {spec.label}
                {format === own ? ' (this platform)' : ''}
              </label>
            </div>
          );
        })}
      </div>
    </fieldset>
  );
}
