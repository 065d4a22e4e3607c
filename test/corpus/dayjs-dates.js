// Date library, minified: dayjs (its main file is dayjs.min.js; every plugin
// and locale is a minified UMD wrapper) formats, parses and does arithmetic on
// fixed UTC dates in several locales; no clock is read.
'use strict';
const dayjs = require('dayjs');
for (const p of ['utc', 'customParseFormat', 'advancedFormat', 'relativeTime', 'duration', 'isoWeek', 'weekOfYear', 'dayOfYear', 'quarterOfYear', 'isBetween', 'minMax', 'localizedFormat', 'updateLocale', 'objectSupport', 'calendar']) {
  dayjs.extend(require(`dayjs/plugin/${p}`));
}
const locales = ['de', 'fr', 'ja', 'ru', 'ar', 'pt-br', 'fi', 'tr'];
for (const l of locales) require(`dayjs/locale/${l}`);

const out = [];
const base = dayjs.utc('2024-02-29T13:45:30.123Z');
const fmt = 'YYYY-MM-DD HH:mm:ss.SSS [Q]Q [W]w [D]DDD Do dddd MMMM A Z X x';
for (let i = 0; i < 400; i++) {
  const d = base.add(i * 37, 'hour').add(i * 13, 'minute').subtract(i % 7, 'day');
  out.push(`${i} ${d.format(fmt)} | iso ${d.isoWeek()}/${d.isoWeekday()} | ${d.startOf('month').format('YYYY-MM-DD')}..${d.endOf('quarter').format('YYYY-MM-DD')} | ${d.from(base)} | ${d.to(base, true)} | ${d.diff(base, 'day', true).toFixed(4)}`);
}
for (const l of locales) {
  const d = base.locale(l);
  out.push(`${l}: ${d.format('LLLL')} | ${d.format('dddd D MMMM YYYY, LT')} | ${d.add(3, 'week').fromNow === undefined ? '' : d.add(3, 'week').from(d)} | ${d.calendar(base.add(1, 'day'))}`);
}
const parsed = ['2024-12-25 08:00', '31/01/2023 23:59', '2020-W10', 'March 5, 1999', '05.06.07'].map((s, i) =>
  [s, dayjs.utc(s, ['YYYY-MM-DD HH:mm', 'DD/MM/YYYY HH:mm', 'YYYY-[W]WW', 'MMMM D, YYYY', 'DD.MM.YY'][i], true)]);
for (const [s, d] of parsed) out.push(`parse ${s} -> ${d.isValid() ? d.toISOString() : 'invalid'}`);
out.push(`strict invalid: ${dayjs.utc('2024-02-30', 'YYYY-MM-DD', true).isValid()}`);
const durs = [dayjs.duration(3723004), dayjs.duration({ days: 400, hours: 5 }), dayjs.duration('P1Y2M3DT4H5M6S')];
for (const d of durs) out.push(`duration ${d.toISOString()} ${d.humanize()} ${d.asHours().toFixed(3)} ${d.format('D[d] HH:mm:ss')}`);
const dates = Array.from({ length: 30 }, (_, i) => base.add((i * 7919) % 1000, 'day'));
out.push(`min ${dayjs.min(dates).toISOString()} max ${dayjs.max(dates).toISOString()}`);
out.push(`between ${dates.filter((d) => d.isBetween('2024-06-01', '2025-01-01', 'day', '[)')).length}`);
out.push(`object ${dayjs.utc({ year: 2010, month: 3, day: 5, hour: 15 }).format()}`);
out.push(`json ${JSON.stringify({ d: base, u: base.valueOf(), unix: base.unix(), days: base.daysInMonth(), leap: base.dayOfYear() })}`);
process.stdout.write(out.join('\n') + '\n');
process.stderr.write(`dayjs: ${out.length} lines\n`);
