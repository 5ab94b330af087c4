/**
 * Small pieces the data pages (databases, volumes, buckets, database sources) share: the project a resource belongs
 * to, chosen and shown by name, and sizes in words. One cached read of the projects serves every page.
 */
import { NavLink } from 'react-router';

import { useApi } from '../../api/hooks';
import { SelectField } from '../../ui';

interface Project {
  id: string;
  name: string;
}

/** The projects the session can see (first 100): the choices of a create form and the names in a list. */
export function useProjects() {
  return useApi<{ projects: Project[] }>('/platform/projects?limit=100');
}

export function ProjectSelect({
  value,
  onChange,
  required,
  hint,
}: {
  value: string;
  onChange: (id: string) => void;
  /** A resource that must belong to a project (a managed database): no organisation-wide choice. */
  required?: boolean;
  hint?: string;
}) {
  const projects = useProjects();
  const options = [
    { value: '', label: required ? 'Choose a project' : 'The organisation (no project)' },
    ...(projects.data?.projects ?? []).map((p) => ({ value: p.id, label: p.name })),
  ];
  return (
    <SelectField
      label="Project"
      hint={hint ?? (required ? undefined : 'Who may see and change it follows the project’s members.')}
      value={value}
      onChange={(e) => onChange(e.target.value)}
      options={options}
    />
  );
}

export function ProjectName({ id }: { id: string | null | undefined }) {
  const projects = useProjects();
  if (!id) return <span className="muted">Organisation</span>;
  const p = projects.data?.projects.find((x) => x.id === id);
  return <span>{p?.name ?? id}</span>;
}

export function DeploymentLink({ id, name }: { id: string; name?: string | null }) {
  return <NavLink to={`/deployments/${id}`}>{name ?? id}</NavLink>;
}

export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/** A whole number from a form's text, or undefined when empty (so the api says what was wrong with the rest). */
export function intOrUndefined(text: string): number | undefined {
  if (text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}
