import { css } from '@codemirror/lang-css';
import { html } from '@codemirror/lang-html';
import { javascript } from '@codemirror/lang-javascript';
import { json } from '@codemirror/lang-json';
import { markdown } from '@codemirror/lang-markdown';
// Both come with codemirror itself (its own dependencies): the editor's colours, chosen for contrast below.
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags as t } from '@lezer/highlight';
import { basicSetup, EditorView } from 'codemirror';
import { useEffect, useRef } from 'react';

/**
 * Token colours that keep at least 4.5:1 against the editor's white background (the default style's lighter ones do
 * not); the words carry the meaning, the colours only help.
 */
const readable = HighlightStyle.define([
  { tag: [t.keyword, t.operatorKeyword, t.modifier, t.controlKeyword], color: '#7a1fa2' },
  { tag: [t.tagName, t.angleBracket], color: '#125e0b' },
  { tag: [t.attributeName, t.propertyName], color: '#7a3e00' },
  { tag: [t.string, t.special(t.string), t.attributeValue, t.regexp], color: '#a3151a' },
  { tag: [t.number, t.bool, t.null, t.atom], color: '#0b5394' },
  { tag: [t.comment, t.meta], color: '#4d5562', fontStyle: 'italic' },
  { tag: [t.definition(t.variableName), t.function(t.variableName), t.className, t.typeName], color: '#1d4ed8' },
  { tag: [t.heading], color: '#1a1d23', fontWeight: 'bold' },
  { tag: [t.link, t.url], color: '#1d4ed8', textDecoration: 'underline' },
  { tag: t.invalid, color: '#b42318' },
]);

/** The language of a file by its name's ending; plain text when none fits. */
function languageOf(path: string) {
  const ext = path.toLowerCase().split('.').pop() ?? '';
  if (['js', 'mjs', 'cjs', 'jsx'].includes(ext)) return [javascript({ jsx: ext === 'jsx' })];
  if (['ts', 'tsx', 'mts'].includes(ext)) return [javascript({ typescript: true, jsx: ext === 'tsx' })];
  if (['html', 'htm'].includes(ext)) return [html()];
  if (ext === 'css') return [css()];
  if (ext === 'json') return [json()];
  if (['md', 'markdown'].includes(ext)) return [markdown()];
  return [];
}

/**
 * A CodeMirror 6 editor of one file; `onChange` gets the text as it is edited. A new `doc` (another file, or the same
 * file read again after a save or a turn) replaces the editor's state.
 */
export function CodeEditor({
  path,
  doc,
  onChange,
  readOnly = false,
}: {
  path: string;
  doc: string;
  onChange: (text: string) => void;
  readOnly?: boolean;
}) {
  const host = useRef<HTMLDivElement>(null);
  const changed = useRef(onChange);
  changed.current = onChange;
  useEffect(() => {
    if (!host.current) return;
    const view = new EditorView({
      doc,
      parent: host.current,
      extensions: [
        basicSetup,
        syntaxHighlighting(readable),
        EditorView.lineWrapping,
        EditorView.theme({ '.cm-gutters': { color: '#4d5562' } }),
        ...languageOf(path),
        EditorView.editable.of(!readOnly),
        EditorView.contentAttributes.of({ 'aria-label': `Contents of ${path}` }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) changed.current(u.state.doc.toString());
        }),
      ],
    });
    return () => view.destroy();
  }, [path, doc, readOnly]);
  return <div className="builder-editor" ref={host} />;
}
