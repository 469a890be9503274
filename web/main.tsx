/* main.tsx - mount the app. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
// The lab's fonts are bundled (DejaVu Sans and Sans Mono, from npm): every
// machine draws the same glyph widths, so chart layouts, the tick thinning
// and the screenshot references do not depend on the fonts a system has.
import '@fontsource/dejavu-sans/400.css';
import '@fontsource/dejavu-sans/700.css';
import '@fontsource/dejavu-mono/400.css';
import '@fontsource/dejavu-mono/700.css';
import './styles.css';

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
