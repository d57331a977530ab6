// The page imports its style sheet for esbuild to bundle into app.css.
declare module '*.css';
