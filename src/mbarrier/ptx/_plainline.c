/* The parser's innermost step in C: one line that holds one plain instruction, built into an
 * ast.Instruction. It is fastpath.plain_instruction (the reference, in Python) step for step: the same
 * splits, the same caches of verdicts on heads, guards and operand texts (Python dictionaries, filled
 * by fastpath's functions on a miss), the same nodes; tests/ptx/test_plainline.py holds the two equal.
 * It only saves the interpreter's work between those steps: no list, partition or strip per line, and
 * nodes built with one allocation each (as tuple.__new__ does for a tuple subclass, without its extra
 * argument tuples). All grammar stays in fastpath.py.
 *
 * configure(heads, guards, pieces, head_miss, guard_miss, piece_miss, other_piece, fallback,
 *           Instruction, Name, Imm, Address, Guard) hands over those objects once;
 * plain_instruction(line, lineno) -> ast.Instruction | None.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

enum { K_NAME, K_IMM, K_ADDRESS, K_OTHER };  /* fastpath._K_*; anything else is not plain */

static PyObject *heads, *guards, *pieces;             /* text -> verdict */
static PyObject *head_miss, *guard_miss, *piece_miss;  /* text -> verdict, cached by them */
static PyObject *other_piece;  /* (text, lineno, column) -> operand or None: `!p`, `_`, floats, `p|q` */
static PyObject *fallback;     /* fastpath's Python version, for lines that are not ASCII */
static PyTypeObject *Instruction, *Name, *Imm, *Address, *Guard;
static PyObject *empty;        /* () */

static PyObject *configured[13];

/* A node: a tuple subclass instance holding the n items (references stolen; NULL items fail). */
static PyObject *node(PyTypeObject *type, Py_ssize_t n, ...)
{
    va_list ap;
#if PY_VERSION_HEX >= 0x030E0000
    /* From 3.14 a tuple caches its hash in the object, and only tuple's own constructor sets that cache
     * up: build the items as a tuple and hand it to tuple.__new__(type, items), as fastpath.py does. */
    PyObject *self = PyTuple_New(n);
#else
    /* One allocation: tuple.__new__ would copy the items out of a second tuple. */
    PyObject *self = type->tp_alloc(type, n);
#endif
    va_start(ap, n);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = va_arg(ap, PyObject *);
        if (self == NULL || item == NULL) {
            Py_XDECREF(item);
            continue;
        }
        PyTuple_SET_ITEM(self, i, item);
    }
    va_end(ap);
    if (self == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyTuple_GET_ITEM(self, i) == NULL) {
            Py_DECREF(self);
            return NULL;
        }
    }
#if PY_VERSION_HEX >= 0x030E0000
    PyObject *args = PyTuple_Pack(1, self);
    Py_DECREF(self);
    if (args == NULL)
        return NULL;
    self = PyTuple_Type.tp_new(type, args, NULL);
    Py_DECREF(args);
#endif
    return self;
}

static PyObject *new_ref(PyObject *o)
{
    Py_INCREF(o);
    return o;
}

/* The cached verdict on text (a new reference), computing it on a miss. */
static PyObject *verdict(PyObject *cache, PyObject *miss, PyObject *text)
{
    PyObject *v = PyDict_GetItemWithError(cache, text);
    if (v != NULL)
        return new_ref(v);
    if (PyErr_Occurred())
        return NULL;
    return PyObject_CallOneArg(miss, text);
}

static int blank(Py_UCS1 c) { return Py_UNICODE_ISSPACE(c); }  /* as str.split() and str.lstrip() */

/* The operand of one piece, with its verdict e, starting at column start; NULL and no error: not plain. */
static PyObject *operand(PyObject *e, PyObject *line_no, long start)
{
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(e, 0));
    PyObject *text = PyTuple_GET_ITEM(e, 1);
    if (kind == K_NAME)
        return node(Name, 3, new_ref(text), new_ref(line_no), PyLong_FromLong(start));
    if (kind == K_IMM) {
        long unsigned_ = PyLong_AsLong(PyTuple_GET_ITEM(e, 6));
        return node(Imm, 5, new_ref(PyTuple_GET_ITEM(e, 5)), new_ref(text), new_ref(line_no),
                    PyLong_FromLong(start), PyBool_FromLong(unsigned_ == 1));
    }
    if (kind == K_ADDRESS) {
        PyObject *b = PyTuple_GET_ITEM(e, 4), *base;
        if (b == Py_None) {
            base = new_ref(Py_None);
        } else {
            long delta = PyLong_AsLong(PyTuple_GET_ITEM(e, 6));
            base = node(Name, 3, new_ref(b), new_ref(line_no), PyLong_FromLong(start + delta));
        }
        return node(Address, 5, base, new_ref(PyTuple_GET_ITEM(e, 5)), new_ref(line_no),
                    PyLong_FromLong(start), new_ref(empty));
    }
    if (kind == K_OTHER) {
        PyObject *col = PyLong_FromLong(start);
        if (col == NULL)
            return NULL;
        PyObject *out = PyObject_CallFunctionObjArgs(other_piece, text, line_no, col, NULL);
        Py_DECREF(col);
        if (out == Py_None) {
            Py_DECREF(out);
            return NULL;
        }
        return out;
    }
    return NULL;
}

/* The operands of s[from:to] split at commas, appended to out; 0: not plain, -1: error. */
static int operands(PyObject *line, const Py_UCS1 *s, Py_ssize_t from, Py_ssize_t to, PyObject *line_no,
                    PyObject *out)
{
    long col = (long)from + 1;
    for (Py_ssize_t i = from;; i++) {
        if (i < to && s[i] != ',')
            continue;
        PyObject *piece = PyUnicode_Substring(line, from, i);
        if (piece == NULL)
            return -1;
        PyObject *e = verdict(pieces, piece_miss, piece);
        Py_DECREF(piece);
        if (e == NULL)
            return -1;
        PyObject *op = operand(e, line_no, col + PyLong_AsLong(PyTuple_GET_ITEM(e, 2)));
        col += PyLong_AsLong(PyTuple_GET_ITEM(e, 3));
        Py_DECREF(e);
        if (op == NULL)
            return PyErr_Occurred() ? -1 : 0;
        int failed = PyList_Append(out, op);
        Py_DECREF(op);
        if (failed)
            return -1;
        if (i >= to)
            return 1;
        from = i + 1;
    }
}

static PyObject *plain(PyObject *line, PyObject *line_no)
{
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(line);
    Py_ssize_t n = PyUnicode_GET_LENGTH(line);
    const Py_UCS1 *semi = memchr(s, ';', (size_t)n);
    if (semi == NULL)
        Py_RETURN_NONE;
    Py_ssize_t end = semi - s;  /* the body is s[:end] */
    /* what may follow the `;`: blanks, then nothing or a `//` comment (fastpath._TAIL) */
    Py_ssize_t i = end + 1;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i < n) {
        if (i + 1 >= n || s[i] != '/' || s[i + 1] != '/' || memchr(s + i, '\n', (size_t)(n - i)) != NULL)
            Py_RETURN_NONE;
    }
    i = 0;
    while (i < end && blank(s[i]))
        i++;
    if (i == end)
        Py_RETURN_NONE;
    PyObject *guard = NULL, *head = NULL, *verdict_head = NULL, *ops = NULL, *result = NULL;
    if (s[i] == '@') {
        Py_ssize_t at = i, w = i;
        while (w < end && !blank(s[w]))
            w++;
        Py_ssize_t r = w;
        while (r < end && blank(s[r]))
            r++;
        PyObject *word = PyUnicode_Substring(line, at, w);
        if (word == NULL)
            return NULL;
        PyObject *g = verdict(guards, guard_miss, word);
        Py_DECREF(word);
        if (g == NULL)
            return NULL;
        PyObject *pred = PyTuple_GET_ITEM(g, 0);
        if (r == end || PyUnicode_GET_LENGTH(pred) == 0) {
            Py_DECREF(g);
            Py_RETURN_NONE;
        }
        guard = node(Guard, 4, new_ref(pred), new_ref(PyTuple_GET_ITEM(g, 1)), new_ref(line_no),
                     PyLong_FromSsize_t(at + 1));
        Py_DECREF(g);
        if (guard == NULL)
            return NULL;
        i = r;
    }
    Py_ssize_t h = i;
    while (i < end && !blank(s[i]))
        i++;
    Py_ssize_t head_end = i;
    while (i < end && blank(s[i]))
        i++;
    head = PyUnicode_Substring(line, h, head_end);
    if (head == NULL)
        goto done;
    verdict_head = verdict(heads, head_miss, head);
    if (verdict_head == NULL)
        goto done;
    PyObject *opcode = PyTuple_GET_ITEM(verdict_head, 0);
    if (PyUnicode_GET_LENGTH(opcode) == 0) {
        result = new_ref(Py_None);
        goto done;
    }
    PyObject *operand_tuple;
    if (i == end) {
        operand_tuple = new_ref(empty);
    } else {
        ops = PyList_New(0);
        if (ops == NULL)
            goto done;
        int found = operands(line, s, i, end, line_no, ops);
        if (found <= 0) {
            result = found == 0 ? new_ref(Py_None) : NULL;
            goto done;
        }
        operand_tuple = PyList_AsTuple(ops);
    }
    result = node(Instruction, 6, new_ref(opcode), new_ref(PyTuple_GET_ITEM(verdict_head, 1)), operand_tuple,
                  guard == NULL ? new_ref(Py_None) : new_ref(guard), new_ref(line_no), PyLong_FromSsize_t(h + 1));
done:
    Py_XDECREF(guard);
    Py_XDECREF(head);
    Py_XDECREF(verdict_head);
    Py_XDECREF(ops);
    return result;
}

static PyObject *plain_instruction(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyUnicode_Check(args[0]) || !PyLong_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "plain_instruction(line: str, lineno: int)");
        return NULL;
    }
    if (fallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_plainline.configure() was not called");
        return NULL;
    }
    if (!PyUnicode_IS_ASCII(args[0]))
        return PyObject_CallFunctionObjArgs(fallback, args[0], args[1], NULL);
    return plain(args[0], args[1]);
}

static PyObject *configure(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *items[13];
    if (!PyArg_UnpackTuple(args, "configure", 13, 13, &items[0], &items[1], &items[2], &items[3], &items[4],
                           &items[5], &items[6], &items[7], &items[8], &items[9], &items[10], &items[11],
                           &items[12]))
        return NULL;
    for (int k = 0; k < 3; k++) {
        if (!PyDict_Check(items[k])) {
            PyErr_SetString(PyExc_TypeError, "configure: the three caches must be dicts");
            return NULL;
        }
    }
    for (int k = 8; k < 13; k++) {
        if (!PyType_Check(items[k]) || !PyType_IsSubtype((PyTypeObject *)items[k], &PyTuple_Type)) {
            PyErr_SetString(PyExc_TypeError, "configure: the node classes must be tuple subclasses");
            return NULL;
        }
    }
    for (int k = 0; k < 13; k++) {
        Py_XSETREF(configured[k], new_ref(items[k]));
    }
    heads = configured[0], guards = configured[1], pieces = configured[2];
    head_miss = configured[3], guard_miss = configured[4], piece_miss = configured[5];
    other_piece = configured[6], fallback = configured[7];
    Instruction = (PyTypeObject *)configured[8], Name = (PyTypeObject *)configured[9];
    Imm = (PyTypeObject *)configured[10], Address = (PyTypeObject *)configured[11];
    Guard = (PyTypeObject *)configured[12];
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"plain_instruction", (PyCFunction)(void (*)(void))plain_instruction, METH_FASTCALL,
     "plain_instruction(line, lineno): the line's ast.Instruction, or None if it is not one plain "
     "instruction (fastpath.plain_instruction, in C)."},
    {"configure", configure, METH_VARARGS, "configure(...): the caches, functions and node classes to use."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_plainline", "fastpath.plain_instruction in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__plainline(void)
{
    empty = PyTuple_New(0);
    if (empty == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
