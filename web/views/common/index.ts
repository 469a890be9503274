/*
 * views/common - the lab's visual language in one module (web/DESIGN.md):
 * colours, a shared domain for a before/after pair, axes with units and
 * thinned ticks, the one number formatter, human metric labels, the chart
 * frame with export, and the chart theme (font size for focus mode and
 * the projector theme). Every view draws with these.
 */
export * from './palette';
export * from '../../model/scales';
export * from '../../model/axis';
export * from './labels';
export * from './theme';
export { Axes } from './Axes';
export { ChartFigure } from './ChartFigure';
export { Legend, type LegendItem } from './Legend';
export * from '../../model/format';
