#pragma once
// The one way to include QCustomPlot. Its header iterates with `foreach`, which the project turns
// off (QT_NO_FOREACH, STYLE.md). Undefining QT_NO_FOREACH only helps when no Qt header came first
// (qforeach.h is included once), so when `foreach` is still missing it is defined for the duration
// of the include as the range-for it means there (two loops over const member lists).
#ifdef QT_NO_FOREACH
#define PARALLAX_RESTORE_QT_NO_FOREACH
#undef QT_NO_FOREACH
#endif
#ifndef foreach
#define foreach(declaration, container) for (declaration : container)
#define PARALLAX_UNDEFINE_FOREACH
#endif
#include <qcustomplot.h>
#ifdef PARALLAX_UNDEFINE_FOREACH
#undef foreach
#undef PARALLAX_UNDEFINE_FOREACH
#endif
#ifdef PARALLAX_RESTORE_QT_NO_FOREACH
#define QT_NO_FOREACH
#undef PARALLAX_RESTORE_QT_NO_FOREACH
#endif
