"""A non-linear check of the SciFact abstention ceiling (not part of octomem: needs
scikit-learn, which octomem does not depend on; run it in a separate virtual environment).

1. ``python -c "import numpy as np, pickle; from octomem.benchmarks.abstention_ceiling import
   feature_table; x, y, g = feature_table(pickle.load(open('sf.pkl', 'rb')));
   np.savez('table.npz', x=x, y=y, g=g)"`` (octomem's environment; sf.pkl from ``collect``)
2. ``python gbm_check.py table.npz`` (an environment with scikit-learn 1.9 and numpy)

Gradient-boosted trees (scikit-learn's HistGradientBoostingClassifier) over every feature
of :data:`octomem.benchmarks.abstention_ceiling.FEATURES`, 10-fold cross-validation grouped
by claim, the same trade-off figures as the study.
"""
import sys

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold

table = np.load(sys.argv[1])
x, y, g = table["x"], table["y"], table["g"]
for depth in (2, 3, None):
    s = np.zeros(len(y))
    for train, test in GroupKFold(10).split(x, y, g):
        model = HistGradientBoostingClassifier(max_depth=depth, learning_rate=0.05,
                                               max_iter=300, l2_regularization=1.0,
                                               random_state=0).fit(x[train], y[train])
        s[test] = model.predict_proba(x[test])[:, 1]
    pos, neg = np.sort(s[y == 1]), np.sort(s[y == 0])
    curve = [float(np.mean(neg < pos[int(np.floor(round((1 - k) * len(pos), 9)))]))
             for k in (0.80, 0.85, 0.90, 0.95)]
    t90 = neg[int(np.ceil(round(0.9 * len(neg), 9))) - 1]
    print(f"| gradient-boosted trees, max depth {depth} | {roc_auc_score(y, s):.3f} | "
          + " | ".join(f"{c:.3f}" for c in curve) + f" | {np.mean(pos > t90):.3f} |")
