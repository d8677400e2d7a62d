/* The HTML report's plot (b): the dispatch's decision tree. */
#include <stdlib.h>
#include <string.h>

#include "report_ctx.h"

/* The tree plot collapses subtrees below the depth where it would draw
 * more than this many leaves. */
#define TREE_MAX_LEAVES 48

/* Drawn left to right: the root at the left, a column per depth, every
 * leaf in the last column one row apart, a node level with the middle of
 * its children. Below the depth cut, subtrees are one grey box. */
typedef struct tree_layout {
	const report_ctx *c;
	int cut;                /* nodes at this depth are drawn as leaves */
	int nleaves;            /* leaves placed so far */
	double leafx, rowh, top;
	double *colx;           /* per depth: the left edge of its column */
	double *x, *y;          /* per node: its box's left edge and vertical centre */
	int *depth;
} tree_layout;

#define TREE_LINE 14.0

/* Leaves of the tree cut at depth cut (a node at depth cut counts as one). */
static int leaves_cut(const htree *t, int i, int d, int cut)
{
	const hnode *n = &t->nodes[i];
	if (n->feature < 0 || d >= cut)
		return 1;
	return leaves_cut(t, n->left, d + 1, cut) + leaves_cut(t, n->right, d + 1, cut);
}

static int subtree_leaves(const htree *t, int i)
{
	const hnode *n = &t->nodes[i];
	return n->feature < 0 ? 1 : subtree_leaves(t, n->left) + subtree_leaves(t, n->right);
}

static bool tree_inner(const tree_layout *L, int i)
{
	return L->c->r->tree.nodes[i].feature >= 0 && L->depth[i] < L->cut;
}

/* A node's label lines, into l[3] (each freed by the caller); the count. */
static int node_lines(const tree_layout *L, int i, char **l)
{
	const hnode *n = &L->c->r->tree.nodes[i];
	const hmatrix *m = L->c->m;
	strbuf a[3];
	for (int j = 0; j < 3; j++)
		strbuf_init(&a[j]);
	int k = 2;
	if (n->feature < 0) {
		const char *name = n->norder ? m->variant_names[n->order[0]] : "(none valid)";
		const char *lt = strchr(name, '<');
		/* long template names on two lines: "kernel" / "<args>" */
		if (lt && lt != name && label_chars(name, LABEL_MAX) > 30) {
			strbuf_putn(&a[0], name, (size_t)(lt - name));
			strbuf_puts(&a[1], lt);
			k = 3;
		} else {
			strbuf_puts(&a[0], name);
		}
		strbuf_printf(&a[k - 1], "%d shapes", n->nshapes);
		if (n->norder > 1)
			strbuf_printf(&a[k - 1], ", +%d fallbacks", n->norder - 1);
	} else if (!tree_inner(L, i)) {
		strbuf_printf(&a[0], "\xe2\x80\xa6 subtree, %d leaves", subtree_leaves(&L->c->r->tree, i));
		strbuf_printf(&a[1], "%d shapes", n->nshapes);
	} else {
		strbuf_printf(&a[0], "%s <= %.0f", m->feature_names[n->feature], n->threshold);
		strbuf_printf(&a[1], "%d shapes", n->nshapes);
	}
	for (int j = 0; j < 3; j++) {
		if (j < k)
			l[j] = a[j].data;
		else
			strbuf_finish(&a[j]);
	}
	return k;
}

static double node_width(const tree_layout *L, int i)
{
	char *l[3];
	int k = node_lines(L, i, l), w = 0;
	for (int j = 0; j < k; j++) {
		int n = label_chars(l[j], LABEL_MAX);
		w = n > w ? n : w;
		free(l[j]);
	}
	return w * CHAR_W + 16;
}

/* Depths (with the cut), the widest inner box of each depth (inner_w[d])
 * and the widest leaf box. */
static void tree_measure(tree_layout *L, int i, int d, double *inner_w, double *leaf_w)
{
	const hnode *n = &L->c->r->tree.nodes[i];
	L->depth[i] = d;
	double w = node_width(L, i);
	double *into = tree_inner(L, i) ? &inner_w[d] : leaf_w;
	*into = w > *into ? w : *into;
	if (tree_inner(L, i)) {
		tree_measure(L, n->left, d + 1, inner_w, leaf_w);
		tree_measure(L, n->right, d + 1, inner_w, leaf_w);
	}
}

static double tree_place(tree_layout *L, int i)
{
	const hnode *n = &L->c->r->tree.nodes[i];
	if (!tree_inner(L, i)) {
		L->x[i] = L->leafx;
		L->y[i] = L->top + (L->nleaves++ + 0.5) * L->rowh;
	} else {
		double a = tree_place(L, n->left), b = tree_place(L, n->right);
		L->x[i] = L->colx[L->depth[i]];
		L->y[i] = (a + b) / 2;
	}
	return L->y[i];
}

static void tree_draw(strbuf *sb, const tree_layout *L, int i)
{
	const hnode *n = &L->c->r->tree.nodes[i];
	const hmatrix *m = L->c->m;
	char *l[3];
	int k = node_lines(L, i, l);
	double w = node_width(L, i), h = 8 + TREE_LINE * k, x = L->x[i], y = L->y[i];
	if (tree_inner(L, i)) {
		for (int side = 0; side < 2; side++) {
			int ch = side ? n->right : n->left;
			double x0 = x + w, cx = L->x[ch], cy = L->y[ch], mx = x0 + 28;
			strbuf_printf(sb, "<path class=\"edge\" d=\"M%.1f %.1fC%.1f %.1f %.1f %.1f %.1f %.1f\"/>"
			                  "<text class=\"edgel\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			              x0, y, mx, y, mx, cy, cx, cy, x0 + 4, y + (side ? 14 : -6), side ? "no" : "yes");
			tree_draw(sb, L, ch);
		}
	}
	const char *fill = "#eef2f7";
	if (n->feature < 0 && n->norder) {
		int ci = chosen_index(L->c, n->order[0]);
		fill = ci >= 0 ? chosen_colour(ci) : "#999";
	} else if (!tree_inner(L, i)) {
		fill = "#ddd";
	}
	strbuf_puts(sb, "<g class=\"node\"><title>");
	if (n->feature < 0) {
		strbuf_printf(sb, "leaf, %d training shapes; tries in order:", n->nshapes);
		for (int j = 0; j < n->norder; j++) {
			strbuf_printf(sb, "\n%d. ", j + 1);
			esc(sb, m->variant_names[n->order[j]]);
		}
	} else {
		strbuf_printf(sb, "%d training shapes; up (yes) when ", n->nshapes);
		esc(sb, m->feature_names[n->feature]);
		strbuf_printf(sb, " <= %.0f", n->threshold);
	}
	strbuf_printf(sb, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"4\" fill=\"%s\"%s/>", x,
	              y - h / 2, w, h, fill, n->feature < 0 ? " fill-opacity=\"0.3\"" : "");
	for (int j = 0; j < k; j++) {
		strbuf_printf(sb, "<text x=\"%.1f\" y=\"%.1f\"%s>", x + 8, y - h / 2 + 15 + TREE_LINE * j,
		              j == k - 1 ? " class=\"dim\"" : "");
		esc_cut(sb, l[j], LABEL_MAX);
		strbuf_puts(sb, "</text>");
		free(l[j]);
	}
	strbuf_puts(sb, "</g>\n");
}

void plot_tree(strbuf *sb, const report_ctx *c)
{
	const htree *t = &c->r->tree;
	if (!t->nnodes) {
		svg_begin(sb, "plot-tree", 400, 60, "decision tree");
		strbuf_puts(sb, "<rect class=\"frame\" x=\"0\" y=\"0\" width=\"400\" height=\"60\"/><text x=\"20\" y=\"35\">"
		                "no tree</text>\n</svg>\n");
		return;
	}
	int depth = htree_depth(t);
	tree_layout L = {.c = c, .cut = depth, .rowh = 58, .top = 6};
	while (L.cut > 0 && leaves_cut(t, 0, 0, L.cut) > TREE_MAX_LEAVES)
		L.cut--;
	L.x = xcalloc((size_t)t->nnodes, sizeof *L.x);
	L.y = xcalloc((size_t)t->nnodes, sizeof *L.y);
	L.depth = xcalloc((size_t)t->nnodes, sizeof *L.depth);
	double *inner_w = xcalloc((size_t)L.cut + 1, sizeof *inner_w), leaf_w = 0;
	L.colx = xcalloc((size_t)L.cut + 1, sizeof *L.colx);
	tree_measure(&L, 0, 0, inner_w, &leaf_w);
	/* a column per depth, as wide as its widest box and room for the edges */
	L.colx[0] = 8;
	for (int d = 1; d <= L.cut; d++)
		L.colx[d] = L.colx[d - 1] + inner_w[d - 1] + 48;
	L.leafx = L.colx[L.cut];
	free(inner_w);
	tree_place(&L, 0);
	double W = L.leafx + leaf_w + 8, H = L.top * 2 + L.nleaves * L.rowh;
	svg_begin(sb, "plot-tree", W < 300 ? 300 : W, H, "the dispatch's decision tree");
	tree_draw(sb, &L, 0);
	strbuf_puts(sb, "</svg>\n");
	if (L.cut < depth)
		strbuf_printf(sb, "<p class=\"note\">The tree has depth %d and %d leaves; drawn to depth %d, deeper subtrees "
		                  "collapsed (the text below has all of it).</p>\n",
		              depth, htree_leaves(t), L.cut);
	free(L.colx);
	free(L.x);
	free(L.y);
	free(L.depth);
}
