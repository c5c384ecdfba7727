/* conv2d: a 3 x 3 convolution of an image (valid region), the input tile cached. */
#include "../metafork.h"

void conv2d(int h, int w, int Bx, int By, float img[h][w], float k[3][3], float out[h - 2][w - 2])
{
    int oh = h - 2, ow = w - 2;
    int gx = (ow + Bx - 1) / Bx, gy = (oh + By - 1) / By;
    meta_schedule cache(img) {
        meta_for (int by = 0; by < gy; by++)
            meta_for (int bx = 0; bx < gx; bx++)
                meta_for (int ty = 0; ty < By; ty++)
                    meta_for (int tx = 0; tx < Bx; tx++) {
                        int i = by * By + ty;
                        int j = bx * Bx + tx;
                        if (i < oh && j < ow) {
                            float acc = 0.0f;
                            for (int di = 0; di < 3; di++)
                                for (int dj = 0; dj < 3; dj++)
                                    acc += k[di][dj] * img[i + di][j + dj];
                            out[i][j] = acc;
                        }
                    }
    }
}

void conv2d_ref(int h, int w, float img[h][w], float k[3][3], float out[h - 2][w - 2])
{
    for (int i = 0; i < h - 2; i++)
        for (int j = 0; j < w - 2; j++) {
            float acc = 0.0f;
            for (int di = 0; di < 3; di++)
                for (int dj = 0; dj < 3; dj++)
                    acc += k[di][dj] * img[i + di][j + dj];
            out[i][j] = acc;
        }
}
