import type { ComponentChildren, VNode } from 'preact';

/** One column: its header and what a row shows in it; `secondary` ones hide below 700 px. */
export interface Column<T> {
  header: ComponentChildren;
  /** What a row shows in it (unused when the table renders its rows itself). */
  cell?: (row: T) => ComponentChildren;
  secondary?: boolean;
}

const secondaryClass = (c: { secondary?: boolean }) => (c.secondary ? 'wide-only' : undefined);

/**
 * The console's tables: a caption for screen readers, scoped column headers, secondary columns hidden on small
 * screens, scrolling within its box. With no rows it shows `empty` instead. A page whose rows are more than cells
 * (a row that expands) renders them itself with `renderRow`.
 */
export function DataTable<T>({
  caption,
  columns,
  rows,
  rowKey,
  empty,
  renderRow,
}: {
  caption: string;
  columns: Array<Column<T>>;
  rows: T[];
  rowKey: (row: T, index: number) => string;
  empty: string;
  renderRow?: (row: T, key: string) => VNode;
}) {
  if (rows.length === 0) return <p>{empty}</p>;
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th key={i} scope="col" class={secondaryClass(c)}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => {
            const key = rowKey(row, index);
            return renderRow ? (
              renderRow(row, key)
            ) : (
              <tr key={key}>
                {columns.map((c, i) => (
                  <td key={i} class={secondaryClass(c)}>
                    {c.cell?.(row)}
                  </td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
