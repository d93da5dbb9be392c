float sqrtf(float v);
double sqrt(double v);
float fabsf(float v);
double fabs(double v);
float floorf(float v);
float fminf(float a, float b);
float fmaxf(float a, float b);
